"""Build or buy: what a self-hosted model's tokens would have cost bought, and where it breaks even
(pure).

A self-hosted model may declare an alternative: an API's list prices per million input and
output tokens, or a model behind the LiteLLM proxy, priced at what the proxy charged for it this
month (its spend over its tokens: one blended price, at that model's own mix of prompt and
completion). Each team's tokens are priced there: `prompt x input + completion x output`.

Self-hosting costs the same whatever its volume (its GPUs are paid for), the API in proportion
to it. So with S the model's serving cost this month and A what its tokens would have cost
bought, self-hosting breaks even at S / A times today's volume: below 1 it is already cheaper.
If utilisation grows with volume, it breaks even at today's measured GPU utilisation of the
serving namespace times S / A (above 1: not reachable on these GPUs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.config.schema import Config
from exporter.config.unit_economics import Alternative
from exporter.ledger.units.tokens import MILLION, ModelTokenCost, TeamTokenCost
from exporter.sources.dcgm.records import GpuRecord

__all__ = [
    "BreakEven",
    "TeamAlternative",
    "alternative_prices",
    "build_or_buy",
    "namespace_utilisation",
]


@dataclass(frozen=True)
class TeamAlternative:
    """A team's tokens to a self-hosted model: what they cost self-hosted and would cost bought."""

    team: str
    model: str
    self_hosted: float | None
    alternative: float


@dataclass(frozen=True)
class BreakEven:
    """A self-hosted model against its alternative, month to date."""

    model: str
    alternative_name: str  # `list price` or the LiteLLM model
    self_hosted: float
    alternative: float
    utilisation: float | None  # the serving namespace's measured GPU utilisation

    @property
    def ratio(self) -> float | None:
        """S / A: the multiple of today's volume at which self-hosting breaks even."""
        return self.self_hosted / self.alternative if self.alternative > 0 else None

    @property
    def utilisation_at_break_even(self) -> float | None:
        """Today's utilisation times the ratio; None when either is unknown."""
        ratio = self.ratio
        return None if ratio is None or self.utilisation is None else self.utilisation * ratio


def alternative_prices(
    alternative: Alternative, models: Mapping[str, ModelTokenCost]
) -> tuple[float, float] | None:
    """Price per input and per output token; None when the proxy's model has no known price."""
    if alternative.litellm_model is None:
        assert alternative.input_per_million is not None
        assert alternative.output_per_million is not None
        return alternative.input_per_million / MILLION, alternative.output_per_million / MILLION
    other = models.get(alternative.litellm_model)
    if other is None or other.declared is None or other.tokens <= 0:
        return None
    blended = other.declared / other.tokens
    return blended, blended


def namespace_utilisation(records: Iterable[GpuRecord]) -> dict[str, float]:
    """Mean measured utilisation of the GPUs each namespace's pods hold (by their share)."""
    sums: dict[str, list[float]] = {}
    for r in records:
        if r.allocated and r.utilisation is not None and r.namespace:
            acc = sums.setdefault(r.namespace, [0.0, 0.0])
            acc[0] += r.utilisation * r.share
            acc[1] += r.share
    return {ns: use / share for ns, (use, share) in sorted(sums.items()) if share > 0}


def build_or_buy(
    config: Config,
    models: Iterable[ModelTokenCost],
    teams: Iterable[TeamTokenCost],
    utilisation: Mapping[str, float],
) -> tuple[tuple[TeamAlternative, ...], tuple[BreakEven, ...]]:
    """Each team's alternative cost per self-hosted model that declares one, and each model's
    break-even."""
    by_model = {m.model: m for m in models}
    declared = {d.model: d for d in config.llm_models if d.alternative is not None}
    out: list[TeamAlternative] = []
    totals: dict[str, float] = {}
    for t in teams:
        decl = declared.get(t.model)
        if decl is None or decl.alternative is None or t.model not in by_model:
            continue
        prices = alternative_prices(decl.alternative, by_model)
        if prices is None:
            continue
        cost = t.prompt_tokens * prices[0] + t.completion_tokens * prices[1]
        out.append(TeamAlternative(t.team, t.model, t.cost, cost))
        totals[t.model] = totals.get(t.model, 0.0) + cost
    even = []
    for model, alternative in sorted(totals.items()):
        decl, m = declared[model], by_model[model]
        if m.measured is None or decl.alternative is None or decl.self_hosted is None:
            continue
        name = decl.alternative.litellm_model or "list price"
        use = utilisation.get(decl.self_hosted.namespace)
        even.append(BreakEven(model, name, m.measured, alternative, use))
    return tuple(out), tuple(even)

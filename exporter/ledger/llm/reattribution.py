"""LLM money into the ledger (pure): external spend added, self-hosted serving cost re-attributed.

Two kinds of model, so that no token is paid twice:

- `external`: a provider bills it, so its LiteLLM spend is new money, added to the sending
  team as component `llm_external`. Models the config does not declare are treated the same
  way, and reported.
- `self_hosted`: its hardware is already in OpenCost, on the team that owns the serving
  namespace. That cost is moved to the teams that sent the tokens, in proportion to weighted
  tokens `prompt + w * completion` (decode costs more than prefill): `-X` on the serving team,
  `+x_i` on the consumers, summing to zero. LiteLLM's own spend for it is an internal price and
  never enters the ledger; it is only compared with the measured cost (pricing drift).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.config.schema import Config, ModelDecl
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.costs.window import Window, serving_costs
from exporter.ledger.llm.routing import Routed, route, weighted_tokens
from exporter.sources.litellm.snapshot import ModelUsage

__all__ = [
    "EXTERNAL",
    "SERVING",
    "LlmReport",
    "apply_llm",
    "apply_llm_to",
    "serving_namespaces",
]

EXTERNAL = Component.LLM_EXTERNAL
SERVING = Component.LLM_SERVING


@dataclass(frozen=True)
class LlmReport:
    """What apply_llm did: external money added, serving cost moved, and what it could not price.

    `external_spend` is already multiplied by `llm_scale`; `moved` is the serving cost
    re-attributed per namespace; `unpriced_models` are external models with tokens but no spend
    reported by the proxy (their money is unknown, so none was added).
    """

    unknown_models: tuple[str, ...]
    external_spend: float
    moved: Mapping[str, float]
    unpriced_models: tuple[str, ...]


def apply_llm(
    ledger: Ledger,
    usage: Iterable[ModelUsage] | Routed,
    models: tuple[ModelDecl, ...],
    attributor: Attributor,
    serving_cost: Mapping[str, Mapping[str, float]],
    weight: float,
    llm_scale: float,
    weights: Mapping[str, float] | None = None,
) -> tuple[Ledger, LlmReport]:
    """A new ledger with external LLM spend added and self-hosted serving cost re-attributed.

    Args:
        ledger: the cost ledger of one window (month to date, or the hourly rate); not changed.
        usage: month-to-date LiteLLM usage per LiteLLM team and model (or it routed).
        models: the config's model declarations.
        attributor: maps LiteLLM teams to teams.
        serving_cost: serving namespace -> {team: cost placed on that team from that namespace},
            in the same window as `ledger`.
        weight: the completion weight w in `prompt + w * completion`.
        llm_scale: turns month-to-date spend into the ledger's window (1.0 for the month,
            1 / hours elapsed for the hourly rate).
        weights: a declaration's own w, by its model (measured, ledger/llm/weights.py), used
            instead of `weight` for its tokens.

    Conservation: the new total equals the old total plus `report.external_spend`; the
    `llm_serving` components sum to zero.
    """
    rows = usage.rows if isinstance(usage, Routed) else route(usage, models, attributor).rows
    out = Ledger(dict(ledger.costs), dict(ledger.fallback))
    unknown: set[str] = set()
    unpriced: set[str] = set()
    external = 0.0
    tokens: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for record, team, decl in rows:
        if decl is None:
            unknown.add(record.model)
        if decl is not None and decl.self_hosted is not None:
            own = (weights or {}).get(decl.model, weight)
            w = weighted_tokens(record.prompt_tokens, record.completion_tokens, own)
            tokens[decl.self_hosted.namespace][team] += w
        elif record.spend is None:
            if record.prompt_tokens or record.completion_tokens:
                unpriced.add(record.model)
        else:
            amount = record.spend * llm_scale
            out.add(team, EXTERNAL, amount)
            external += amount
    moved = {ns: _reattribute(out, serving_cost.get(ns, {}), tokens[ns]) for ns in sorted(tokens)}
    report = LlmReport(tuple(sorted(unknown)), external, moved, tuple(sorted(unpriced)))
    return out, report


def _reattribute(
    ledger: Ledger, costs: Mapping[str, float], consumers: Mapping[str, float]
) -> float:
    """Move each serving team's cost onto consumers by weighted tokens; returns the cost moved."""
    total_weight = sum(consumers[t] for t in sorted(consumers))
    if total_weight <= 0:
        return 0.0  # nobody sent tokens: the hardware cost stays where OpenCost put it
    ordered = sorted(t for t in consumers if consumers[t] > 0)
    moved = 0.0
    for server in sorted(costs):
        cost = costs[server]
        if not cost:
            continue
        ledger.add(server, SERVING, -cost)
        given = 0.0
        for team in ordered[:-1]:
            share = cost * consumers[team] / total_weight
            ledger.add(team, SERVING, share)
            given += share
        # The last consumer takes the remainder, so the shares add up to exactly the cost.
        ledger.add(ordered[-1], SERVING, cost - given)
        moved += cost
    return moved


def serving_namespaces(config: Config) -> list[str]:
    """The namespaces that serve the config's self-hosted models."""
    return [m.self_hosted.namespace for m in config.llm_models if m.self_hosted is not None]


def apply_llm_to(
    window: Window,
    usage: Iterable[ModelUsage] | Routed,
    config: Config,
    attributor: Attributor,
    weights: Mapping[str, float] | None = None,
) -> tuple[Window, LlmReport]:
    """`apply_llm` on one window: its serving cost and LLM scale come from the window itself."""
    serving = {
        ns: {team: cost * window.scale for team, cost in teams.items()}
        for ns, teams in serving_costs(window.lines, serving_namespaces(config)).items()
    }
    ledger, report = apply_llm(
        window.ledger,
        usage,
        config.llm_models,
        attributor,
        serving,
        config.llm_completion_weight,
        window.llm_scale,
        weights,
    )
    return window.with_ledger(ledger), report

"""The model cap: which models the team x model series fold into `__other__`, by spend."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from exporter.ledger.attribution import OTHER
from exporter.ledger.llm.usage import TeamModelUsage

__all__ = ["models_over_cap"]


def models_over_cap(
    usage: Mapping[tuple[str, str], TeamModelUsage], declared: Iterable[str], max_models: int
) -> tuple[str, ...]:
    """The models beyond `max_models`, sorted by name: declared models are always kept, then
    the rest by the cluster's month-to-date spend (largest first, then name), so the cut is
    deterministic and the costliest models stay visible.

    The cap counts models, not teams: a model is either shown for every team or folded for
    every team, so a sum by model over the series is that model's whole figure.
    """
    declared_set = set(declared)
    spend: dict[str, float] = defaultdict(float)
    for (_, model), use in usage.items():
        if model not in declared_set:
            spend[model] += abs(use.spend) if use.spend is not None else 0.0
    seen = {model for _, model in usage}
    room = max(0, max_models - len(declared_set & seen))
    ranked = sorted(spend, key=lambda m: (-spend[m], m))
    folded = set(ranked[room:])
    if folded and OTHER in seen:
        # A model LiteLLM itself calls `__other__` would share the fold's series: it joins it.
        folded.add(OTHER)
    return tuple(sorted(folded))

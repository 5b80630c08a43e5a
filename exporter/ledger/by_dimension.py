"""Beyond the team, in the join: shared costs spread, then every dimension split (pure).

Both windows take the same steps: the shared rows' money moves onto the teams (`shared`), then
each configured dimension divides the resulting team ledger over its values, capped at
`max_values` (the hourly rate folds what the month folded).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.config.schema import Config
from exporter.exposition.catalogue import (
    DIMENSION_COST_MONTH_TO_DATE,
    DIMENSION_COST_PER_HOUR,
    DIMENSION_VALUES_OVER_CAP,
)
from exporter.exposition.samples import Sample
from exporter.ledger.costs import Window
from exporter.ledger.dimensions import (
    DimensionCosts,
    DimensionResolver,
    cap_values,
    split_ledger,
    tag_values,
)
from exporter.ledger.shared_costs import spread_shared

__all__ = ["DimensionSplit", "beyond_team", "dimension_samples"]


@dataclass(frozen=True)
class DimensionSplit:
    """One dimension of a join: the hourly rate and the month to date by value and component."""

    name: str
    hourly: DimensionCosts
    month: DimensionCosts
    folded: tuple[str, ...] = ()


def beyond_team(
    config: Config,
    hourly: Window,
    month: Window,
    llm_tags: Mapping[str, float] | None = None,
    llm_spend: float = 0.0,
) -> tuple[Window, Window, tuple[DimensionSplit, ...]]:
    """Spread shared costs in both windows, then split them by every dimension.

    `llm_tags` is the month's LiteLLM spend per request tag and `llm_spend` all of its spend,
    both in the exporter's currency (only their ratio matters, so both windows use them).
    """
    shared = config.shared_costs
    if shared is not None:
        declared = [t.name for t in config.teams]
        hourly = hourly.with_ledger(spread_shared(hourly.ledger, shared, declared))
        month = month.with_ledger(spread_shared(month.ledger, shared, declared))
    splits: list[DimensionSplit] = []
    for dimension in config.dimensions:
        resolver = DimensionResolver(dimension)
        tags = tag_values(llm_tags or {}, dimension.litellm_tag_prefix)
        month_costs = _split(resolver, month, tags, llm_spend)
        hourly_costs = _split(resolver, hourly, tags, llm_spend)
        month_costs, folded = cap_values(month_costs, dimension.max_values)
        kept = {value for value, _ in month_costs.costs}
        hourly_costs, _ = cap_values(hourly_costs, dimension.max_values, keep=kept)
        splits.append(DimensionSplit(dimension.name, hourly_costs, month_costs, tuple(folded)))
    return hourly, month, tuple(splits)


def _split(
    resolver: DimensionResolver, window: Window, tags: Mapping[str, float], llm_spend: float
) -> DimensionCosts:
    values = [resolver.value(a) for a in window.allocations.allocations]
    return split_ledger(resolver.name, window.ledger, window.lines, values, tags, llm_spend)


def dimension_samples(splits: Iterable[DimensionSplit]) -> Iterable[Sample]:
    """The dimension families: hourly, month to date, and how many values were folded."""
    for split in splits:
        name = split.name
        for family, costs in (
            (DIMENSION_COST_PER_HOUR, split.hourly.costs),
            (DIMENSION_COST_MONTH_TO_DATE, split.month.costs),
        ):
            for (value, component), amount in sorted(costs.items()):
                # Built directly: the label `value` would clash with Sample.of's argument.
                labels = (("dimension", name), ("value", value), ("component", component))
                yield Sample(family, labels, amount)
        yield Sample.of(DIMENSION_VALUES_OVER_CAP, float(len(split.folded)), dimension=name)

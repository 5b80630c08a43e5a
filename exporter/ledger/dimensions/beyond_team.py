"""Beyond the team, in the join: shared costs spread, then every dimension split (pure).

Both windows take the same steps: the shared rows' money moves onto the teams (`shared`), then
each configured dimension divides the resulting team ledger over its values, capped at
`max_values` (the hourly rate folds what the month folded).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from exporter.config.schema import Config
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.ledger.costs.window import Window
from exporter.ledger.dimensions.joint import JointSplit, joint_split
from exporter.ledger.dimensions.shared import spread_shared
from exporter.ledger.dimensions.split import (
    DimensionCosts,
    DimensionResolver,
    LlmTags,
    cap_values,
    split_ledger,
)
from exporter.sources.litellm.snapshot import LiteLLMSnapshot

__all__ = ["DimensionSplit", "beyond_team", "llm_tags", "month_joint"]


@dataclass(frozen=True)
class DimensionSplit:
    """One dimension of a join: the hourly rate and the month to date by value and component."""

    name: str
    hourly: DimensionCosts
    month: DimensionCosts
    folded: tuple[str, ...] = ()


def beyond_team(
    config: Config, hourly: Window, month: Window, llm_tags: LlmTags | None = None
) -> tuple[Window, Window, tuple[DimensionSplit, ...]]:
    """Spread shared costs in both windows, then split them by every dimension.

    `llm_tags` is the month's LiteLLM spend by request tag (only its ratios matter, so both
    windows use it).
    """
    shared = config.shared_costs
    if shared is not None:
        declared = [t.name for t in config.teams]
        hourly = hourly.with_ledger(spread_shared(hourly.ledger, shared, declared))
        month = month.with_ledger(spread_shared(month.ledger, shared, declared))
    splits: list[DimensionSplit] = []
    for dimension in config.dimensions:
        resolver = DimensionResolver(dimension)
        prefix = dimension.litellm_tag_prefix
        month_costs = _split(resolver, month, llm_tags, prefix)
        hourly_costs = _split(resolver, hourly, llm_tags, prefix)
        month_costs, folded = cap_values(month_costs, dimension.max_values)
        kept = {value for value, _ in month_costs.costs}
        hourly_costs, _ = cap_values(hourly_costs, dimension.max_values, keep=kept)
        splits.append(DimensionSplit(dimension.name, hourly_costs, month_costs, tuple(folded)))
    return hourly, month, tuple(splits)


def month_joint(
    config: Config, month: Window, tags: LlmTags | None, splits: tuple[DimensionSplit, ...]
) -> JointSplit:
    """The month (as `beyond_team` returned it) by every dimension's values at once, each
    dimension's cap folded as its own split folded it (for FOCUS `Tags`)."""
    if not config.dimensions:
        return JointSplit()
    allocations = month.allocations.allocations
    values = [[DimensionResolver(d).value(a) for a in allocations] for d in config.dimensions]
    return joint_split(
        [d.name for d in config.dimensions],
        month.ledger,
        month.lines,
        values,
        tags,
        [d.litellm_tag_prefix for d in config.dimensions],
        [s.folded for s in splits],
    )


def _split(
    resolver: DimensionResolver, window: Window, tags: LlmTags | None, prefix: str | None
) -> DimensionCosts:
    values = [resolver.value(a) for a in window.allocations.allocations]
    return split_ledger(resolver.name, window.ledger, window.lines, values, tags, prefix)


def llm_tags(llm: LiteLLMSnapshot | None, attributor: Attributor) -> LlmTags | None:
    """The snapshot's tag spend (converted already), its teams placed as the join places
    LiteLLM teams; None without LiteLLM."""
    if llm is None:
        return None
    aliases = {t.team_id: t.alias for t in llm.teams}

    def team(team_id: str | None, alias: str | None) -> str:
        return attributor.team_for_litellm(team_id, alias) if team_id else UNALLOCATED

    by_team: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for (team_id, tag), spend in sorted(llm.team_tags.items()):
        by_team[team(team_id, aliases.get(team_id))][tag] += spend
    team_total: dict[str, float] = defaultdict(float)
    for use in llm.usage:
        team_total[team(use.team_id, use.alias)] += use.spend or 0.0
    return LlmTags(
        dict(llm.tags),
        sum(team_total.values()),
        {t: dict(v) for t, v in by_team.items()},
        dict(team_total),
    )

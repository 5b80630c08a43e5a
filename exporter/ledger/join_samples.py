"""The join's own samples: budgets, the ledgers' cost series, and how LiteLLM was read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from exporter.calendar import Month
from exporter.config.schema import Config
from exporter.exposition.catalogue.costs import (
    ATTRIBUTION_FALLBACK_COST_PER_HOUR,
    TEAM_BUDGET,
    TEAM_COST_MONTH_TO_DATE,
    TEAM_COST_PER_HOUR,
)
from exporter.exposition.catalogue.llm import LLM_MONTH_EDGE_OFFSET_SECONDS
from exporter.exposition.samples import Sample
from exporter.ledger.costs.ledger import Ledger

__all__ = ["budget_samples", "config_budgets", "ledger_samples", "llm_read_samples"]


def config_budgets(config: Config) -> dict[tuple[str, str], float]:
    """Monthly budgets declared in config, keyed by (team, kind)."""
    out: dict[tuple[str, str], float] = {}
    for team in config.teams:
        if team.budget.gpu is not None:
            out[(team.name, "gpu")] = team.budget.gpu
        if team.budget.llm is not None:
            out[(team.name, "llm")] = team.budget.llm
    return out


def budget_samples(budgets: Mapping[tuple[str, str], float]) -> Iterable[Sample]:
    """`chargeback_team_budget` series."""
    for (team, kind), amount in sorted(budgets.items()):
        yield Sample.of(TEAM_BUDGET, amount, team=team, kind=kind)


def ledger_samples(hourly: Ledger, month: Ledger) -> Iterable[Sample]:
    """Cost series from the hourly and month-to-date ledgers, plus fallback-placed cost."""
    for (team, component), amount in sorted(hourly.costs.items()):
        yield Sample.of(TEAM_COST_PER_HOUR, amount, team=team, component=component)
    for (team, component), amount in sorted(month.costs.items()):
        yield Sample.of(TEAM_COST_MONTH_TO_DATE, amount, team=team, component=component)
    for (team, key), amount in sorted(hourly.fallback.items()):
        yield Sample.of(ATTRIBUTION_FALLBACK_COST_PER_HOUR, amount, team=team, key=key)


def llm_read_samples(month: Month) -> list[Sample]:
    """How LiteLLM was read: the month-edge error of its UTC day rows (the zone's offset)."""
    return [Sample.of(LLM_MONTH_EDGE_OFFSET_SECONDS, month.utc_offset_seconds)]

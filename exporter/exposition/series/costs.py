"""Team cost series: cost rates and month to date, budgets, and the labelling backlog."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from exporter.exposition.catalogue.costs import (
    ATTRIBUTION_FALLBACK_COST_PER_HOUR,
    LABELLING_BACKLOG_COST_MONTH_TO_DATE,
    TEAM_BUDGET,
    TEAM_COST_MONTH_TO_DATE,
    TEAM_COST_PER_HOUR,
)
from exporter.exposition.samples import Sample
from exporter.ledger.costs.backlog import FALLBACK, UNPLACED, Backlog
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.result import Chargeback

__all__ = ["backlog_samples", "budget_samples", "ledger_samples", "series"]


def series(chargeback: Chargeback) -> list[Sample]:
    """Budgets always; the ledgers and the backlog with OpenCost."""
    out = list(budget_samples(chargeback.budgets))
    if chargeback.hourly is not None and chargeback.month is not None:
        out.extend(ledger_samples(chargeback.hourly, chargeback.month))
    if chargeback.backlog is not None:
        out.extend(backlog_samples(chargeback.backlog))
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


def backlog_samples(found: Backlog) -> Iterator[Sample]:
    """`chargeback_labelling_backlog_cost_month_to_date`: both lists, bounded by the limit."""
    for kind, rows in ((UNPLACED, found.unallocated), (FALLBACK, found.fallback)):
        for row in rows:
            yield Sample.of(
                LABELLING_BACKLOG_COST_MONTH_TO_DATE,
                row.cost,
                kind=kind,
                namespace=row.namespace,
                workload=row.workload,
                team=row.owner,
                key=row.keys[0] if kind == FALLBACK and row.keys else "",
            )

"""Join the latest records of every source into the chargeback and its samples (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from exporter.attribution import Attributor
from exporter.chargeback import Ledger, cap_teams
from exporter.config import Config
from exporter.costs import window_costs
from exporter.samples import Sample
from exporter.sources.opencost import OpenCostSnapshot

__all__ = ["Chargeback", "assemble", "ledger_samples"]


@dataclass(frozen=True)
class Chargeback:
    """What one join produced: hourly and month-to-date ledgers, and every sample to export."""

    rate: Ledger | None
    month: Ledger | None
    samples: tuple[Sample, ...]
    folded_teams: tuple[str, ...] = ()
    cluster_rate: float | None = None
    cluster_month: float | None = None
    budgets: Mapping[tuple[str, str], float] = field(default_factory=dict)


def assemble(
    config: Config, attributor: Attributor, records: Mapping[str, object], now: datetime
) -> Chargeback:
    """Build the chargeback from whichever sources have fresh records."""
    del now  # the windows carry their own time; kept for the sources joined later
    samples: list[Sample] = []
    budgets = config_budgets(config)
    opencost = records.get("opencost")
    if not isinstance(opencost, OpenCostSnapshot):
        samples.extend(budget_samples(budgets))
        return Chargeback(None, None, tuple(samples), budgets=budgets)
    rate_costs = window_costs(opencost.rate, attributor, config.idle_policy, config.idle_by_node)
    month_costs = window_costs(opencost.month, attributor, config.idle_policy, config.idle_by_node)
    rate = rate_costs.ledger.scaled(1.0 / rate_costs.hours)
    month = month_costs.ledger
    declared = [t.name for t in config.teams]
    month, folded = cap_teams(month, declared, config.attribution.max_teams)
    rate, _ = cap_teams(rate, declared, config.attribution.max_teams, fold=folded)
    cluster_rate = rate_costs.cluster_total / rate_costs.hours
    samples.extend(ledger_samples(rate, month))
    samples.append(Sample.of("cluster_cost_per_hour", cluster_rate))
    samples.extend(budget_samples(budgets))
    return Chargeback(
        rate,
        month,
        tuple(samples),
        tuple(folded),
        cluster_rate,
        month_costs.cluster_total,
        budgets,
    )


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
        yield Sample.of("team_budget", amount, team=team, kind=kind)


def ledger_samples(rate: Ledger, month: Ledger) -> Iterable[Sample]:
    """Cost series from the hourly and month-to-date ledgers, plus fallback-placed cost."""
    for (team, component), amount in sorted(rate.costs.items()):
        yield Sample.of("team_cost_per_hour", amount, team=team, component=component)
    for (team, component), amount in sorted(month.costs.items()):
        yield Sample.of("team_cost_month_to_date", amount, team=team, component=component)
    for (team, key), amount in sorted(rate.fallback.items()):
        yield Sample.of("attribution_fallback_cost_per_hour", amount, team=team, key=key)

"""Join the latest records of every source into the chargeback and its samples (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from exporter.attribution import Attributor
from exporter.calendar import hours_in_month, month_start
from exporter.chargeback import Ledger, cap_teams
from exporter.config import Config
from exporter.costs import WindowCosts, gpu_price_per_hour, serving_costs, window_costs
from exporter.join_gpu import (
    apply_quota,
    dcgm_samples,
    gpu_hours_by_team,
    kueue_samples,
    quota_budgets,
)
from exporter.llm import (
    apply_llm,
    llm_budget_state_samples,
    llm_pricing_samples,
    llm_report_samples,
    llm_usage_samples,
)
from exporter.metrics import (
    ATTRIBUTION_FALLBACK_COST_PER_HOUR,
    CLUSTER_COST_PER_HOUR,
    TEAM_BUDGET,
    TEAM_COST_MONTH_TO_DATE,
    TEAM_COST_PER_HOUR,
    TEAMS_OVER_CAP,
)
from exporter.samples import Sample
from exporter.sources.litellm import LiteLLMSnapshot
from exporter.sources.opencost import OpenCostSnapshot
from exporter.sources.table import Records

__all__ = ["Chargeback", "assemble", "budget_samples", "config_budgets", "ledger_samples"]


@dataclass(frozen=True)
class Chargeback:
    """What one join produced: hourly and month-to-date ledgers, and every sample to export."""

    rate: Ledger | None
    month: Ledger | None
    samples: tuple[Sample, ...]
    folded_teams: tuple[str, ...] = ()
    budgets: Mapping[tuple[str, str], float] = field(default_factory=dict)


def assemble(config: Config, attributor: Attributor, records: Records, now: datetime) -> Chargeback:
    """Build the chargeback from whichever sources have fresh records."""
    samples: list[Sample] = []
    budgets = config_budgets(config)
    opencost, dcgm, kueue, llm = records.opencost, records.dcgm, records.kueue, records.litellm
    gpu_price = _gpu_price(opencost)
    if dcgm is not None:
        samples.extend(dcgm_samples(config, attributor, dcgm, gpu_price))
    if kueue is not None:
        samples.extend(kueue_samples(attributor, kueue))
        if gpu_price is not None:
            hours = hours_in_month(now, config.zone)
            budgets.update(quota_budgets(config, attributor, kueue, gpu_price, hours))
    if llm is not None:
        samples.extend(llm_usage_samples(llm.usage, attributor))
        samples.extend(llm_budget_state_samples(llm.teams, attributor))
    samples.extend(budget_samples(budgets))
    if opencost is None:
        return Chargeback(None, None, tuple(samples), budgets=budgets)
    policy, by_node = config.idle_policy, config.idle_by_node
    rate_costs = window_costs(opencost.rate, attributor, policy, by_node)
    month_costs = window_costs(opencost.month, attributor, policy, by_node)
    rate = rate_costs.ledger.scaled(1.0 / rate_costs.hours)
    month = month_costs.ledger
    if kueue is not None and gpu_price is not None:
        used = gpu_hours_by_team(opencost.month, attributor)
        rate, month = apply_quota(
            config, attributor, kueue, (rate, month), used, gpu_price, month_costs.hours
        )
    if llm is not None:
        rate, month = _with_llm(
            config, attributor, llm, (rate, month), (rate_costs, month_costs), now, samples
        )
    declared = [t.name for t in config.teams]
    month, folded = cap_teams(month, declared, config.attribution.max_teams)
    rate, _ = cap_teams(rate, declared, config.attribution.max_teams, fold=folded)
    cluster_rate = rate_costs.cluster_total / rate_costs.hours
    samples.extend(ledger_samples(rate, month))
    samples.append(Sample.of(CLUSTER_COST_PER_HOUR, cluster_rate))
    samples.append(Sample.of(TEAMS_OVER_CAP, float(len(folded))))
    return Chargeback(rate, month, tuple(samples), tuple(folded), budgets)


def _gpu_price(opencost: OpenCostSnapshot | None) -> float | None:
    """OpenCost's GPU-hour price: the recent window's, else the month's."""
    if opencost is None:
        return None
    return gpu_price_per_hour(opencost.rate) or gpu_price_per_hour(opencost.month)


def _with_llm(
    config: Config,
    attributor: Attributor,
    llm: LiteLLMSnapshot,
    ledgers: tuple[Ledger, Ledger],
    windows: tuple[WindowCosts, WindowCosts],
    now: datetime,
    samples: list[Sample],
) -> tuple[Ledger, Ledger]:
    """Add external LLM spend and move self-hosted serving cost to the teams that sent tokens.

    The month ledger takes month-to-date spend as is; the hourly ledger takes it spread over
    the hours elapsed in the month (LiteLLM reports days, not hours), and re-attributes the
    serving cost of the rate window by the month's token shares.
    """
    rate, month = ledgers
    rate_costs, month_costs = windows
    namespaces = [m.self_hosted.namespace for m in config.llm_models if m.self_hosted]
    w = config.llm_completion_weight
    month_serving = serving_costs(month_costs.lines, namespaces)
    per_hour = 1.0 / rate_costs.hours
    rate_serving = {
        ns: {team: cost * per_hour for team, cost in teams.items()}
        for ns, teams in serving_costs(rate_costs.lines, namespaces).items()
    }
    elapsed = max((now - month_start(now, config.zone)).total_seconds() / 3600.0, 1.0)
    models = config.llm_models
    month, report = apply_llm(month, llm.usage, models, attributor, month_serving, w, 1.0)
    rate, _ = apply_llm(rate, llm.usage, models, attributor, rate_serving, w, 1.0 / elapsed)
    samples.extend(llm_pricing_samples(llm.usage, models, month_serving, w))
    samples.extend(llm_report_samples(report))
    return rate, month


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


def ledger_samples(rate: Ledger, month: Ledger) -> Iterable[Sample]:
    """Cost series from the hourly and month-to-date ledgers, plus fallback-placed cost."""
    for (team, component), amount in sorted(rate.costs.items()):
        yield Sample.of(TEAM_COST_PER_HOUR, amount, team=team, component=component)
    for (team, component), amount in sorted(month.costs.items()):
        yield Sample.of(TEAM_COST_MONTH_TO_DATE, amount, team=team, component=component)
    for (team, key), amount in sorted(rate.fallback.items()):
        yield Sample.of(ATTRIBUTION_FALLBACK_COST_PER_HOUR, amount, team=team, key=key)

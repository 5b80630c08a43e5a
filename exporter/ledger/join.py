"""Join the latest records of every source into the chargeback and its samples (pure).

Two ledger windows travel together through the same steps: the hourly rate (OpenCost's recent
window, described by Kueue's live status) and the month to date. Each step takes a window and
returns a new one, and conserves money: a step either moves cost between teams or adds new
money that it reports (external LLM spend).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from exporter.calendar import Month
from exporter.config.schema import Config
from exporter.exposition.catalogue.cluster import CLUSTER_COST_PER_HOUR, TEAMS_OVER_CAP
from exporter.exposition.catalogue.health import SOURCE_ENDPOINTS
from exporter.exposition.samples import Sample
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.backlog import Backlog, backlog_samples, team_backlog
from exporter.ledger.costs.cluster import idle_samples, month_samples
from exporter.ledger.costs.gpus import gpu_samples, idle_month_samples
from exporter.ledger.costs.ledger import Ledger, cap_teams
from exporter.ledger.costs.policies import idle_rule
from exporter.ledger.costs.quota import (
    apply_quota,
    quota_budgets,
    quota_samples,
)
from exporter.ledger.costs.window import Window, WindowMemo, gpu_hours_by_team, serving_costs
from exporter.ledger.dimensions.beyond_team import (
    DimensionSplit,
    beyond_team,
    dimension_samples,
    llm_tags,
    month_joint,
)
from exporter.ledger.dimensions.joint import JointSplit
from exporter.ledger.join_samples import (
    budget_samples,
    config_budgets,
    ledger_samples,
    llm_read_samples,
)
from exporter.ledger.llm import (
    LlmReport,
    ModelPricing,
    Routed,
    TeamModelUsage,
    apply_llm_to,
    llm_pricing_samples,
    llm_report_samples,
    model_pricing,
    serving_namespaces,
)
from exporter.ledger.llm.memo import LlmMemo, LlmPart
from exporter.ledger.llm.weights import (
    CompletionWeight,
    applied_weights,
    completion_weights,
    weight_samples,
)
from exporter.ledger.prices.joined import (
    gpu_prices,
    joined_quota,
    node_flavor,
    price_lookup,
    prices_by_flavor,
)
from exporter.ledger.units.economics import UnitEconomics, price_builds, unit_economics
from exporter.sources.opencost.source import OpenCostSnapshot
from exporter.sources.reading import Reading
from exporter.sources.table import Records

__all__ = ["Chargeback", "join"]


@dataclass(frozen=True)
class Chargeback:
    """What one join of a reading produced: both ledgers, typed LLM figures, every sample."""

    reading: Reading
    hourly: Ledger | None
    month: Ledger | None
    samples: tuple[Sample, ...]
    folded_teams: tuple[str, ...] = ()
    budgets: Mapping[tuple[str, str], float] = field(default_factory=dict)
    llm_usage: Mapping[tuple[str, str], TeamModelUsage] = field(default_factory=dict)
    llm_pricing: tuple[ModelPricing, ...] = ()
    # The month's idle cost as OpenCost reported it, before any policy moved it (the report's
    # header idle); None without OpenCost.
    month_idle: float | None = None
    # The month's labelling backlog and GPU-hours per team (placed as the cost, before any fold).
    backlog: Backlog | None = None
    gpu_hours: Mapping[str, float] = field(default_factory=dict)
    units: UnitEconomics = field(default_factory=UnitEconomics)  # exporter.ledger.units.economics
    dimensions: tuple[DimensionSplit, ...] = ()  # config order
    joint: JointSplit = field(default_factory=JointSplit)  # every dimension at once (FOCUS)
    weights: tuple[CompletionWeight, ...] = ()  # per self-hosted model (ledger.llm.weights)

    @property
    def at(self) -> datetime:
        """The instant the sources were read at."""
        return self.reading.at

    @property
    def period(self) -> Month:
        """The calendar month joined."""
        return self.reading.month


def join(
    config: Config,
    attributor: Attributor,
    records: Records,
    reading: Reading,
    memo: LlmMemo | None = None,
    *,
    joint: bool = False,
    windows: WindowMemo | None = None,
) -> Chargeback:
    """Build the chargeback of `reading` (its month, up to its instant) from whichever sources
    have fresh records.

    A caller that joins again and again passes an LlmMemo and a WindowMemo; the result is the
    same without. `joint` also splits the month by every dimension at once (`Chargeback.joint`,
    for FOCUS).
    """
    samples: list[Sample] = []
    budgets = config_budgets(config)
    opencost = records.opencost
    quota = joined_quota(records.kueue, attributor)
    builds = price_builds(config, records)
    prices = gpu_prices(config, records, builds)
    flavor_prices = prices_by_flavor(prices, quota)
    if records.dcgm is not None and config.sources.dcgm is not None:
        threshold = config.sources.dcgm.idle_threshold
        lookup = price_lookup(config, prices, builds)
        samples.extend(gpu_samples(records.dcgm, attributor, threshold, lookup))
        samples.extend(idle_month_samples(records.dcgm, attributor, lookup))
        endpoints = sorted(records.dcgm.endpoints.items())
        samples.extend(
            Sample.of(SOURCE_ENDPOINTS, float(n), source="dcgm", state=state)
            for state, n in endpoints
        )
    if quota is not None:
        samples.extend(quota_samples(quota.kueue, attributor, quota.lent))
        if flavor_prices:
            configured = {t.name for t in config.teams if t.budget.gpu is not None}
            hours = reading.month.hours
            budgets.update(quota_budgets(quota.flavors, configured, flavor_prices, hours))
    part: LlmPart | None = None
    usage: Mapping[tuple[str, str], TeamModelUsage] = {}
    if records.litellm is not None:
        part = (memo or LlmMemo()).part(records.litellm, attributor, config.llm_models)
        usage = part.usage
        samples.extend(part.samples)
        samples.extend(llm_read_samples(reading.month))
    llm_weights = completion_weights(config, records.vllm)
    samples.extend(weight_samples(llm_weights))
    weights = applied_weights(llm_weights)
    samples.extend(budget_samples(budgets))
    samples.extend(month_samples(reading.month))
    routed = part.routed if part is not None else None
    if opencost is None:
        units = unit_economics(
            config, attributor, records, prices, builds, flavor_prices, routed, None, weights
        )
        samples.extend(units.samples())
        return Chargeback(
            reading,
            None,
            None,
            tuple(samples),
            budgets=budgets,
            llm_usage=usage,
            units=units,
            weights=llm_weights,
        )
    hourly, month = _windows(config, attributor, opencost, reading, windows or WindowMemo())
    backlog = team_backlog(config, month.lines, month.allocations)
    samples.extend(backlog_samples(backlog))
    if quota is not None and flavor_prices:
        flavor_of = node_flavor(prices, quota)
        rule = idle_rule(config.idle_policy)
        hourly = apply_quota(hourly, quota.flavors, flavor_prices, rule, flavor_of)
        month = apply_quota(month, quota.flavors, flavor_prices, rule, flavor_of)
    pricing: tuple[ModelPricing, ...] = ()
    if part is not None:
        hourly, month, report = _with_llm(config, attributor, part.routed, hourly, month, weights)
        pricing = _pricing(config, part.routed, month, weights)
        samples.extend(llm_pricing_samples(pricing))
        samples.extend(llm_report_samples(report))
    tags = llm_tags(part.llm if part is not None else None, attributor)
    hourly, month, splits = beyond_team(config, hourly, month, tags)
    combined = month_joint(config, month, tags, splits) if joint else JointSplit()
    declared = [t.name for t in config.teams]
    month_ledger, folded = cap_teams(month.ledger, declared, config.attribution.max_teams)
    hourly_ledger, _ = cap_teams(hourly.ledger, declared, config.attribution.max_teams, fold=folded)
    samples.extend(ledger_samples(hourly_ledger, month_ledger))
    samples.extend(dimension_samples(splits))
    samples.append(Sample.of(CLUSTER_COST_PER_HOUR, hourly.cluster_cost))
    samples.extend(idle_samples(opencost))
    samples.append(Sample.of(TEAMS_OVER_CAP, float(len(folded))))
    units = unit_economics(
        config, attributor, records, prices, builds, flavor_prices, routed, month, weights
    )
    samples.extend(units.samples())
    return Chargeback(
        reading,
        hourly_ledger,
        month_ledger,
        tuple(samples),
        tuple(folded),
        budgets,
        usage,
        pricing,
        sum(opencost.month.idle.values()),
        backlog,
        gpu_hours_by_team(month.lines, month.allocations),
        units,
        splits,
        combined,
        llm_weights,
    )


def _windows(
    config: Config,
    attributor: Attributor,
    opencost: OpenCostSnapshot,
    reading: Reading,
    memo: WindowMemo,
) -> tuple[Window, Window]:
    """The hourly window (a rate, live) and the month-to-date window (a total).

    LiteLLM reports days, not hours, so the hourly window takes month-to-date LLM spend spread
    over the hours elapsed in the month.
    """
    rule, by_node = idle_rule(config.idle_policy), config.idle_by_node
    # Timestamps: two datetimes of one zone subtract as wall time, blind to DST.
    seconds = reading.at.timestamp() - reading.month.start.timestamp()
    elapsed = max(seconds / 3600.0, 1.0)
    window = memo.window
    hourly = window(opencost.rate, attributor, rule, by_node, live=True, llm_scale=1 / elapsed)
    month = window(opencost.month, attributor, rule, by_node, live=False, llm_scale=1.0)
    return hourly, month


def _with_llm(
    config: Config,
    attributor: Attributor,
    routed: Routed,
    hourly: Window,
    month: Window,
    weights: Mapping[str, float],
) -> tuple[Window, Window, LlmReport]:
    """Add external LLM spend and move self-hosted serving cost to the teams that sent tokens.

    The month's token shares re-attribute each window's serving cost; the month's report says
    which models the config does not declare.
    """
    month, report = apply_llm_to(month, routed, config, attributor, weights)
    hourly, _ = apply_llm_to(hourly, routed, config, attributor, weights)
    return hourly, month, report


def _pricing(
    config: Config, routed: Routed, month: Window, weights: Mapping[str, float]
) -> tuple[ModelPricing, ...]:
    """Pricing drift: the month's serving cost against what LiteLLM declares."""
    serving = serving_costs(month.lines, serving_namespaces(config))
    weight = config.llm_completion_weight
    return tuple(model_pricing(routed, config.llm_models, serving, weight, weights))

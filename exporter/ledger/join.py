"""Join the latest records of every source into the chargeback and its samples (pure).

Two ledger windows travel together through the same steps: the hourly rate (OpenCost's recent
window, described by Kueue's live status) and the month to date. Each step takes a window and
returns a new one, and conserves money: a step either moves cost between teams or adds new
money that it reports (external LLM spend).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from exporter.calendar import Month
from exporter.config.schema import Config, ModelDecl
from exporter.exposition.catalogue import (
    ATTRIBUTION_FALLBACK_COST_PER_HOUR,
    CLUSTER_COST_PER_HOUR,
    LLM_MONTH_EDGE_OFFSET_SECONDS,
    SOURCE_ENDPOINTS,
    TEAM_BUDGET,
    TEAM_COST_MONTH_TO_DATE,
    TEAM_COST_PER_HOUR,
    TEAMS_OVER_CAP,
)
from exporter.exposition.samples import Sample
from exporter.ledger.applied_prices import effective_prices
from exporter.ledger.attribution import Attributor
from exporter.ledger.backlog import Backlog, backlog_samples, team_backlog
from exporter.ledger.by_dimension import (
    DimensionSplit,
    beyond_team,
    dimension_samples,
    llm_tags,
    month_joint,
)
from exporter.ledger.chargeback import Ledger, cap_teams
from exporter.ledger.clusterwide import idle_samples, month_samples
from exporter.ledger.costs import Window, WindowMemo, gpu_hours_by_team, serving_costs
from exporter.ledger.gpus import PriceLookup, gpu_samples, idle_month_samples, model_price
from exporter.ledger.joint import JointSplit
from exporter.ledger.llm import (
    LlmReport,
    ModelPricing,
    Routed,
    TeamModelUsage,
    apply_llm_to,
    llm_budget_state_samples,
    llm_pricing_samples,
    llm_report_samples,
    llm_usage_samples,
    model_pricing,
    route,
    serving_namespaces,
    team_model_usage,
)
from exporter.ledger.policies import idle_rule
from exporter.ledger.price_build import BuiltPrice
from exporter.ledger.prices import GpuPrices, node_models
from exporter.ledger.quota import (
    FlavorOf,
    TeamGpuQuota,
    apply_quota,
    gpu_quota_by_flavor,
    lend,
    quota_budgets,
    quota_samples,
)
from exporter.ledger.unit_join import UnitEconomics, price_builds, unit_economics
from exporter.ledger.weights import (
    CompletionWeight,
    applied_weights,
    completion_weights,
    weight_samples,
)
from exporter.sources.kueue.source import KueueSnapshot
from exporter.sources.litellm.source import LiteLLMSnapshot
from exporter.sources.opencost.source import OpenCostSnapshot
from exporter.sources.reading import Reading
from exporter.sources.table import Records

__all__ = [
    "Chargeback",
    "LlmMemo",
    "LlmPart",
    "budget_samples",
    "config_budgets",
    "join",
    "ledger_samples",
    "llm_part",
]


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
    units: UnitEconomics = field(default_factory=UnitEconomics)  # exporter.ledger.unit_join
    dimensions: tuple[DimensionSplit, ...] = ()  # config order
    joint: JointSplit = field(default_factory=JointSplit)  # every dimension at once (FOCUS)
    weights: tuple[CompletionWeight, ...] = ()  # per self-hosted model (ledger.weights)

    @property
    def at(self) -> datetime:
        """The instant the sources were read at."""
        return self.reading.at

    @property
    def period(self) -> Month:
        """The calendar month joined."""
        return self.reading.month


@dataclass(frozen=True)
class _Quota:
    """Kueue joined once per refresh: lending apportioned once, summed per team."""

    kueue: KueueSnapshot
    flavors: Mapping[str, TeamGpuQuota]  # GPU flavor -> quota per team
    lent: Mapping[tuple[str, str, str], float]


@dataclass(frozen=True)
class LlmPart:
    """What the join takes from one LiteLLM snapshot alone: usage and budget state, as samples."""

    llm: LiteLLMSnapshot  # in the exporter's currency
    routed: Routed  # its usage records with their teams and declarations
    usage: Mapping[tuple[str, str], TeamModelUsage]
    samples: tuple[Sample, ...]


def llm_part(
    snapshot: LiteLLMSnapshot, attributor: Attributor, models: tuple[ModelDecl, ...]
) -> LlmPart:
    """Convert the snapshot, route its records, and build its usage per team and model."""
    # LiteLLM's money enters in the exporter's currency, here and nowhere later.
    llm = snapshot.converted()
    routed = route(llm.usage, models, attributor)
    usage = team_model_usage(routed, attributor)
    samples = (*llm_usage_samples(usage), *llm_budget_state_samples(llm.teams, attributor))
    return LlmPart(llm, routed, usage, samples)


class LlmMemo:
    """The LLM part of the last LiteLLM snapshot joined, reused while that snapshot is fresh.

    LiteLLM refreshes on its own interval, and at a thousand teams by fifty models its part of
    the join is most of it: the other sources' refreshes need not redo it. Keyed on the
    snapshot object (held, so its id cannot be reused), the attributor and the declarations,
    not on `converted()`, which makes a new object per call.
    """

    def __init__(self) -> None:
        self._key: tuple[object, ...] = ()  # snapshot, attributor, declarations: held
        self._part: LlmPart | None = None

    def part(
        self, snapshot: LiteLLMSnapshot, attributor: Attributor, models: tuple[ModelDecl, ...]
    ) -> LlmPart:
        """The snapshot's LLM part, computed when it is not the last one seen."""
        key = (snapshot, attributor, models)
        if self._part is None or not all(a is b for a, b in zip(key, self._key, strict=True)):
            self._part, self._key = llm_part(snapshot, attributor, models), key
        return self._part


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
    quota = _quota(records.kueue, attributor)
    builds = price_builds(config, records)
    prices = gpu_prices(config, records, builds)
    flavor_prices = _flavor_prices(prices, quota)
    if records.dcgm is not None and config.sources.dcgm is not None:
        threshold = config.sources.dcgm.idle_threshold
        lookup = _model_price(config, prices, builds)
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
        samples.extend(_llm_read_samples(reading.month))
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
        flavor_of = _flavor_of(prices, quota)
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


def gpu_prices(
    config: Config, records: Records, builds: tuple[BuiltPrice, ...] = ()
) -> GpuPrices | None:
    """GPU-hour prices per flavor and model from this refresh's records, if OpenCost has any."""
    opencost = records.opencost
    if opencost is None:
        return None
    by_model, by_flavor = effective_prices(config, builds)
    return GpuPrices(
        (opencost.rate, opencost.month),
        assets=opencost.gpu_nodes,
        flavors=records.kueue.flavors if records.kueue is not None else (),
        dcgm_models=node_models(records.dcgm.gpus) if records.dcgm is not None else None,
        by_model=by_model,
        by_flavor=by_flavor,
    )


def _model_price(
    config: Config, prices: GpuPrices | None, builds: tuple[BuiltPrice, ...]
) -> PriceLookup:
    """Waste's price of a GPU model: `gpu_prices` (or its build), else its nodes' OpenCost price,
    else blended."""
    configured = model_price(effective_prices(config, builds)[0])
    if prices is None:
        return configured
    blended = prices.blended

    def lookup(model: str) -> float | None:
        found = configured(model)
        found = prices.model(model) if found is None else found
        return blended if found is None else found

    return lookup


def _flavor_prices(prices: GpuPrices | None, quota: _Quota | None) -> dict[str, float]:
    """Each GPU flavor's price; one nothing prices takes the cluster's blended price."""
    if prices is None or quota is None:
        return {}
    out: dict[str, float] = {}
    for flavor in sorted(quota.flavors):
        price = prices.flavor(flavor)
        price = prices.blended if price is None else price
        if price is not None:
            out[flavor] = price
    return out


def _flavor_of(prices: GpuPrices | None, quota: _Quota) -> FlavorOf:
    """Which flavor a node's GPU-hours count against: the flavor that selects the node, else
    the team's flavor with the most nominal quota (a node no flavor selects is unlabelled)."""
    flavors = sorted(quota.flavors)

    def flavor_of(node: str, team: str) -> str | None:
        found = prices.flavor_of_node(node, flavors) if prices is not None else None
        if found is not None:
            return found
        held = [(-quota.flavors[f].nominal.get(team, 0.0), f) for f in flavors]
        return min(held)[1] if held else None

    return flavor_of


def _quota(kueue: KueueSnapshot | None, attributor: Attributor) -> _Quota | None:
    if kueue is None:
        return None
    lent = lend(kueue.queues)
    return _Quota(kueue, gpu_quota_by_flavor(kueue, attributor, lent), lent)


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


def _llm_read_samples(month: Month) -> list[Sample]:
    """How LiteLLM was read: the month-edge error of its UTC day rows (the zone's offset)."""
    return [Sample.of(LLM_MONTH_EDGE_OFFSET_SECONDS, month.utc_offset_seconds)]


def _pricing(
    config: Config, routed: Routed, month: Window, weights: Mapping[str, float]
) -> tuple[ModelPricing, ...]:
    """Pricing drift: the month's serving cost against what LiteLLM declares."""
    serving = serving_costs(month.lines, serving_namespaces(config))
    weight = config.llm_completion_weight
    return tuple(model_pricing(routed, config.llm_models, serving, weight, weights))


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

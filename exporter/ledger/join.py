"""Join the latest snapshot of every source into one typed chargeback (pure).

Two ledger windows travel together through the same steps: the hourly rate (OpenCost's recent
window, described by Kueue's live status) and the month to date. Each step takes a window and
returns a new one, and conserves money: a step either moves cost between teams or adds new
money that it reports (external LLM spend). The result holds figures, never samples: the
serving side renders it (`exporter.exposition.series`) and finance reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from exporter.config.schema import Config
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.backlog import Backlog, team_backlog
from exporter.ledger.costs.budgets import config_budgets
from exporter.ledger.costs.cluster import ClusterCosts, cluster_costs
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.consumption import Consumption, consumption
from exporter.ledger.costs.gpus import idle_gpu_hours, team_gpus
from exporter.ledger.costs.ledger import Ledger, cap_teams
from exporter.ledger.costs.policies import idle_rule
from exporter.ledger.costs.quota import queue_quotas, quota_budgets
from exporter.ledger.costs.quota_charges import apply_quota
from exporter.ledger.costs.window import (
    Window,
    WindowMemo,
    gpu_hours_by_team,
    serving_costs,
)
from exporter.ledger.dimensions.beyond_team import (
    DimensionSplit,
    beyond_team,
    llm_tags,
    month_joint,
)
from exporter.ledger.dimensions.joint import JointSplit, folded_joint
from exporter.ledger.llm import (
    ModelPricing,
    Routed,
    apply_llm_to,
    model_pricing,
    serving_namespaces,
)
from exporter.ledger.llm.memo import LlmMemo, LlmPart
from exporter.ledger.llm.model_cap import models_over_cap
from exporter.ledger.llm.weights import applied_weights, completion_weights
from exporter.ledger.prices.build import BuiltPrice
from exporter.ledger.prices.gpu import GpuPrices
from exporter.ledger.prices.joined import (
    GoverningPrices,
    JoinedQuota,
    governing_prices,
    gpu_prices,
    joined_quota,
    node_flavor,
    price_lookup,
    prices_by_flavor,
)
from exporter.ledger.prices.reprice import reprice
from exporter.ledger.queues.figures import QueueFigures, QueueInputs, queue_figures
from exporter.ledger.reconcile import Reconciliation, TrueUp
from exporter.ledger.reconcile.apply import true_ups, with_true_ups
from exporter.ledger.reconcile.joined import closes_month, publishers, reconciliation_of
from exporter.ledger.result import Chargeback, GpuFigures, LlmFigures
from exporter.ledger.units.economics import price_builds, unit_economics
from exporter.sources.opencost.snapshot import OpenCostSnapshot
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots

__all__ = ["join"]


@dataclass(frozen=True)
class _Costs:
    """The cost part of a join, which needs OpenCost: both ledgers and what they yield."""

    hourly: Window
    month: Window
    hourly_ledger: Ledger
    month_ledger: Ledger
    folded: tuple[str, ...]
    backlog: Backlog
    cluster: ClusterCosts
    splits: tuple[DimensionSplit, ...]
    joint: JointSplit
    consumption: Consumption
    pricing: tuple[ModelPricing, ...]
    unknown_models: tuple[str, ...] | None
    true_ups: tuple[TrueUp, ...] = ()


def join(
    config: Config,
    attributor: Attributor,
    latest: Snapshots,
    reading: Reading,
    memo: LlmMemo | None = None,
    *,
    detail: bool = False,
    windows: WindowMemo | None = None,
) -> Chargeback:
    """Build the chargeback of `reading` (its month, up to its instant) from whichever sources
    have a fresh snapshot.

    A caller that joins again and again passes an LlmMemo and a WindowMemo; the result is the
    same without. `detail` also gives the month by every dimension at once and its consumption
    (`Chargeback.joint` and `consumption`, for FOCUS).
    """
    quota = joined_quota(latest.kueue, attributor)
    builds = price_builds(config, latest)
    own = gpu_prices(None, latest)
    governing = governing_prices(config, builds, own, quota)
    prices = gpu_prices(config, latest, builds)
    if prices is not None and governing is not None:
        prices = prices.governed(dict(governing.nodes))
    flavor_prices = prices_by_flavor(prices, quota)
    part = None
    if latest.litellm is not None:
        part = (memo or LlmMemo()).part(latest.litellm, attributor, config.llm_models)
    llm_weights = completion_weights(config, latest.vllm)
    weights = applied_weights(llm_weights)
    routed = part.routed if part is not None else None
    bills = reconciliation_of(config, latest, part.llm if part is not None else None, reading)
    costs = None
    if latest.opencost is not None:
        memo_windows = windows or WindowMemo()
        opencost = _governed(latest.opencost, governing, memo_windows)
        made = _windows(config, attributor, opencost, reading, memo_windows)
        parts = (part, quota, prices)
        closing = bills if closes_month(reading) else None
        costs = _costs(
            config,
            attributor,
            (opencost, latest.opencost),
            made,
            parts,
            weights,
            closing,
            detail=detail,
        )
    units = unit_economics(
        config,
        attributor,
        latest,
        prices,
        builds,
        flavor_prices,
        routed,
        costs.month if costs is not None else None,
        weights,
        own,
    )
    gpu_hours = gpu_hours_by_team(costs.month.lines, costs.month.allocations) if costs else {}
    priced = (quota, flavor_prices, prices)
    queues = _queues(config, attributor, latest, priced, (costs, gpu_hours), reading)
    return Chargeback(
        reading=reading,
        budgets=_budgets(config, quota, flavor_prices, reading),
        units=units,
        weights=llm_weights,
        hourly=costs.hourly_ledger if costs is not None else None,
        month=costs.month_ledger if costs is not None else None,
        folded_teams=costs.folded if costs is not None else (),
        cluster=costs.cluster if costs is not None else None,
        gpus=_gpus(config, attributor, latest, prices, builds),
        quota=queue_quotas(quota.kueue, attributor, quota.lent) if quota is not None else None,
        queues=queues,
        llm=_llm(config, part, costs),
        backlog=costs.backlog if costs is not None else None,
        gpu_hours=gpu_hours,
        dimensions=costs.splits if costs is not None else (),
        joint=costs.joint if costs is not None else JointSplit(),
        consumption=costs.consumption if costs is not None else Consumption(),
        reconciliation=bills,
        true_ups=costs.true_ups if costs is not None else (),
    )


def _queues(
    config: Config,
    attributor: Attributor,
    latest: Snapshots,
    priced: tuple[JoinedQuota | None, Mapping[str, float], GpuPrices | None],
    month: tuple[_Costs | None, Mapping[str, float]],
    reading: Reading,
) -> QueueFigures | None:
    """The queue figures (docs/queues.md) of the month so far; None without Kueue."""
    quota, flavor_prices, prices = priced
    costs, gpu_hours = month
    if quota is None or latest.kueue is None or config.sources.kueue is None:
        return None
    scheduling = latest.kueue.scheduling
    gpu_cost: dict[str, float] = {}
    if costs is not None:
        for (team, component), amount in costs.month_ledger.costs.items():
            if component == Component.GPU:
                gpu_cost[team] = gpu_cost.get(team, 0.0) + amount
    inputs = QueueInputs(
        quota=queue_quotas(quota.kueue, attributor, quota.lent),
        workloads=scheduling.workloads if scheduling and not scheduling.missing else None,
        flavor_prices=flavor_prices,
        blended=prices.blended if prices is not None else None,
        gpu_cost=gpu_cost,
        gpu_hours=gpu_hours,
        missing=("workloads",) if scheduling is None or scheduling.missing else (),
        metrics=latest.kueue_metrics,
    )
    top = config.sources.kueue.top_preempted
    return queue_figures(inputs, attributor, reading.month, reading.until, top)


def _governed(
    opencost: OpenCostSnapshot, governing: GoverningPrices | None, memo: WindowMemo
) -> OpenCostSnapshot:
    """OpenCost's windows with every GPU-hour at the price the config governs, if it does."""
    if governing is None:
        return opencost
    assets = opencost.gpu_nodes
    rate = memo.priced(
        opencost.rate, governing, lambda: reprice(opencost.rate, governing.price, assets), live=True
    )
    month = memo.priced(
        opencost.month,
        governing,
        lambda: reprice(opencost.month, governing.price, assets),
        live=False,
    )
    return replace(opencost, rate=rate, month=month)


def _budgets(
    config: Config,
    quota: JoinedQuota | None,
    flavor_prices: Mapping[str, float],
    reading: Reading,
) -> dict[tuple[str, str], float]:
    """The declared budgets, and a GPU budget built from quota for a team that declares none."""
    budgets = config_budgets(config)
    if quota is not None and flavor_prices:
        configured = {t.name for t in config.teams if t.budget.gpu is not None}
        hours = reading.month.hours
        budgets.update(quota_budgets(quota.flavors, configured, flavor_prices, hours))
    return budgets


def _gpus(
    config: Config,
    attributor: Attributor,
    latest: Snapshots,
    prices: GpuPrices | None,
    builds: tuple[BuiltPrice, ...],
) -> GpuFigures | None:
    """Each team's GPUs now and the month's idle GPU-hours, each priced at its model's price."""
    if latest.dcgm is None or config.sources.dcgm is None:
        return None
    lookup = price_lookup(config, prices, builds)
    threshold = config.sources.dcgm.idle_threshold
    return GpuFigures(
        teams=team_gpus(latest.dcgm, attributor, threshold, lookup),
        idle_hours=idle_gpu_hours(latest.dcgm, attributor, lookup),
        endpoints=dict(latest.dcgm.endpoints),
    )


def _llm(config: Config, part: LlmPart | None, costs: _Costs | None) -> LlmFigures | None:
    if part is None:
        return None
    declared = (m.model for m in config.llm_models)
    folded = models_over_cap(part.usage, declared, config.attribution.max_models)
    if costs is None:
        return LlmFigures(usage=part.usage, budgets=part.budgets, folded_models=folded)
    return LlmFigures(
        usage=part.usage,
        budgets=part.budgets,
        pricing=costs.pricing,
        unknown_models=costs.unknown_models,
        folded_models=folded,
    )


def _costs(
    config: Config,
    attributor: Attributor,
    opencost: tuple[OpenCostSnapshot, OpenCostSnapshot],
    windows: tuple[Window, Window],
    parts: tuple[LlmPart | None, JoinedQuota | None, GpuPrices | None],
    weights: Mapping[str, float],
    closing: Reconciliation | None,
    *,
    detail: bool,
) -> _Costs:
    """OpenCost's windows through quota, LLM, true-up, shared costs and dimensions, then the
    team cap.

    `opencost` is the snapshot at the applied GPU prices, then as OpenCost charged it;
    `closing` the bills of a closed month's whole reading, which true up the month window.
    """
    hourly, month = windows
    part, quota, prices = parts
    backlog = team_backlog(config, month.lines, month.allocations)
    flavor_prices = prices_by_flavor(prices, quota)
    if quota is not None and flavor_prices:
        flavor_of = node_flavor(prices, quota)
        rule = idle_rule(config.idle_policy)
        hourly = apply_quota(hourly, quota.flavors, flavor_prices, rule, flavor_of)
        month = apply_quota(month, quota.flavors, flavor_prices, rule, flavor_of)
    pricing: tuple[ModelPricing, ...] = ()
    unknown: tuple[str, ...] | None = None
    if part is not None:
        # The month's token shares re-attribute each window's serving cost.
        month, report = apply_llm_to(month, part.routed, config, attributor, weights)
        hourly, _ = apply_llm_to(hourly, part.routed, config, attributor, weights)
        pricing, unknown = _pricing(config, part.routed, month, weights), report.unknown_models
    ups: tuple[TrueUp, ...] = ()
    if closing is not None:
        usage = part.usage if part is not None else {}
        ups = true_ups(closing, usage, month.ledger, publishers(config))
        month = month.with_ledger(with_true_ups(month.ledger, ups))
    tags = llm_tags(part.llm if part is not None else None, attributor)
    hourly, month, splits = beyond_team(config, hourly, month, tags)
    declared = [t.name for t in config.teams]
    cap = config.attribution.max_teams
    month_ledger, folded = cap_teams(month.ledger, declared, cap)
    hourly_ledger, _ = cap_teams(hourly.ledger, declared, cap, fold=folded)
    joint, used = JointSplit(), Consumption()
    if detail:
        gone = frozenset(folded)
        joint = folded_joint(month_joint(config, month, tags, splits), gone)
        usage = part.usage if part is not None else {}
        used = consumption(
            month,
            usage,
            pricing,
            _served(config, pricing),
            config.llm_completion_weight,
            gone,
        )
    return _Costs(
        hourly,
        month,
        hourly_ledger,
        month_ledger,
        tuple(folded),
        backlog,
        cluster_costs(opencost[0], hourly.cluster_cost, opencost[1]),
        splits,
        joint,
        used,
        pricing,
        unknown,
        ups,
    )


def _served(config: Config, pricing: tuple[ModelPricing, ...]) -> frozenset[str]:
    """The public names of the self-hosted models: declared, or priced as served."""
    declared = {m.model for m in config.llm_models if m.self_hosted is not None}
    return frozenset(declared | {p.model for p in pricing})


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


def _pricing(
    config: Config, routed: Routed, month: Window, weights: Mapping[str, float]
) -> tuple[ModelPricing, ...]:
    """Pricing drift: the month's serving cost against what LiteLLM declares."""
    serving = serving_costs(month.lines, serving_namespaces(config))
    weight = config.llm_completion_weight
    return tuple(model_pricing(routed, config.llm_models, serving, weight, weights))

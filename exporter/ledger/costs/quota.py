"""Kueue quota per team: each queue's quota, each team's GPU quota per flavor, and the GPU
budgets that quota implies (pure). Who lent what: lending.py; quota as money: quota_charges.py.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.lending import QueueKey, lend
from exporter.sources.kueue.records import KueueSnapshot

__all__ = [
    "GPU_RESOURCES",
    "QueueQuota",
    "TeamGpuQuota",
    "default_gpu_budgets",
    "gpu_quota_by_flavor",
    "gpu_quota_by_team",
    "queue_quotas",
    "quota_budgets",
]

GPU_RESOURCES: frozenset[str] = frozenset({"nvidia.com/gpu"})


@dataclass(frozen=True)
class TeamGpuQuota:
    """GPU quota per team (summed over its queues and GPU flavors), ready for the money rules."""

    nominal: Mapping[str, float]
    usage: Mapping[str, float]
    borrowed: Mapping[str, float]
    lent: Mapping[str, float]
    lending_limit: Mapping[str, float]


@dataclass(frozen=True)
class QueueQuota:
    """One ClusterQueue's quota of one flavor and resource, with its team and what it lent."""

    team: str
    cluster_queue: str
    cohort: str
    flavor: str
    resource: str
    nominal: float
    usage: float
    borrowed: float
    lent: float
    borrowing_limit: float
    lending_limit: float


def queue_quotas(
    snapshot: KueueSnapshot,
    attributor: Attributor,
    lent: Mapping[QueueKey, float] | None = None,
) -> tuple[QueueQuota, ...]:
    """Every queue's quota as Kueue reports it; `lent` defaults to `lend(snapshot.queues)`."""
    given = lend(snapshot.queues) if lent is None else lent
    return tuple(
        QueueQuota(
            attributor.team_for_queue(r.cluster_queue),
            r.cluster_queue,
            r.cohort,
            r.flavor,
            r.resource,
            r.nominal,
            r.usage,
            r.borrowed,
            given.get((r.cluster_queue, r.flavor, r.resource), 0.0),
            r.borrowing_limit,
            r.lending_limit,
        )
        for r in snapshot.queues
    )


def gpu_quota_by_team(
    snapshot: KueueSnapshot,
    attributor: Attributor,
    lent: Mapping[QueueKey, float] | None = None,
    *,
    resources: Collection[str] = GPU_RESOURCES,
    flavors: Collection[str] | None = None,
) -> TeamGpuQuota:
    """GPU nominal, usage, borrowed, lent and lending limit per team, over its queues."""
    given = lend(snapshot.queues) if lent is None else lent
    sums: dict[str, dict[str, float]] = {
        k: defaultdict(float) for k in ("nominal", "usage", "borrowed", "lent", "lending_limit")
    }
    for r in snapshot.queues:
        if r.resource not in resources or (flavors is not None and r.flavor not in flavors):
            continue
        team = attributor.team_for_queue(r.cluster_queue)
        sums["nominal"][team] += r.nominal
        sums["usage"][team] += r.usage
        sums["borrowed"][team] += r.borrowed
        sums["lent"][team] += given.get((r.cluster_queue, r.flavor, r.resource), 0.0)
        sums["lending_limit"][team] += min(r.lending_limit, r.nominal)
    return TeamGpuQuota(**{k: dict(v) for k, v in sums.items()})


def default_gpu_budgets(
    nominal_by_team: Mapping[str, float], price: float, hours_in_month: float
) -> dict[str, float]:
    """A team's default monthly GPU budget: its nominal GPU quota x price x hours of the month."""
    return {team: gpus * price * hours_in_month for team, gpus in sorted(nominal_by_team.items())}


def quota_budgets(
    quota: Mapping[str, TeamGpuQuota],
    configured: Collection[str],
    prices: Mapping[str, float],
    hours_in_month: float,
) -> dict[tuple[str, str], float]:
    """GPU budgets for teams that configure none: nominal quota x its flavor's price x hours."""
    monthly: dict[str, float] = {}
    for flavor in sorted(quota):
        if flavor in prices:
            for team, gpus in quota[flavor].nominal.items():
                monthly[team] = monthly.get(team, 0.0) + gpus * prices[flavor]
    return {
        (team, Component.GPU): amount * hours_in_month
        for team, amount in sorted(monthly.items())
        if team not in configured and not team.startswith("__")
    }


def gpu_quota_by_flavor(
    snapshot: KueueSnapshot,
    attributor: Attributor,
    lent: Mapping[QueueKey, float] | None = None,
    *,
    resources: Collection[str] = GPU_RESOURCES,
) -> dict[str, TeamGpuQuota]:
    """`gpu_quota_by_team` for each flavor that has GPU quota: flavor -> per-team quota."""
    given = lend(snapshot.queues) if lent is None else lent
    flavors = sorted({r.flavor for r in snapshot.queues if r.resource in resources})
    return {
        f: gpu_quota_by_team(snapshot, attributor, given, resources=resources, flavors={f})
        for f in flavors
    }

"""The queue figures of one join: Kueue's quota, Workloads and prices to per-team figures (pure).

What needs Workload objects (preempted work, waiting GPU-hours) is None or empty when they
were not read, and named in `missing`; the ceilings need only quota. Waiting percentiles,
weighted shares (and pending workloads without Workloads) come from Kueue's metrics, read
apart (`missing` says `metrics` without them, `metrics:<part>` for a part with no series).
Next month's borrowing takes the month so far's borrowed GPU-hours at their pace over 30
days: the exporter keeps no 30 days of Kueue history of its own.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from exporter.calendar import Month
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.ledger.costs.lending import month_borrowing
from exporter.ledger.costs.quota import GPU_RESOURCES, QueueQuota
from exporter.ledger.queues.borrowing import WINDOW_DAYS, BorrowingAhead, borrowing_ahead
from exporter.ledger.queues.ceiling import QueueCeiling, queue_ceilings
from exporter.ledger.queues.fairshare import TeamShare, fair_shares
from exporter.ledger.queues.preempted import Eviction, Preemption, preempted_work
from exporter.ledger.queues.waiting import (
    Bucket,
    PendingSpan,
    TeamWaiting,
    team_waiting,
    waited_gpu_hours,
)
from exporter.sources.kueue.workloads import WorkloadRecord
from exporter.sources.kueue_metrics.records import KueueMetrics

__all__ = ["METRICS", "WORKLOADS", "QueueFigures", "QueueInputs", "queue_figures"]

METRICS = "metrics"  # the part Kueue's metrics would give: wait percentiles, weighted shares
WORKLOADS = "workloads"  # the part Workload objects give: preempted work, waiting GPU-hours


@dataclass(frozen=True)
class QueueInputs:
    """What the join hands over: quota rows, Workloads (None: not read), and prices."""

    quota: tuple[QueueQuota, ...]
    workloads: tuple[WorkloadRecord, ...] | None
    flavor_prices: Mapping[str, float]
    blended: float | None  # the cluster's blended GPU-hour price, for an unknown flavor
    gpu_cost: Mapping[str, float]  # the month's GPU cost per team, as the ledger charged it
    gpu_hours: Mapping[str, float]  # the month's GPU-hours per team
    missing: tuple[str, ...] = ()
    metrics: KueueMetrics | None = None  # Kueue's own metrics; None without sources.kueue_metrics


@dataclass(frozen=True)
class QueueFigures:
    """Every queue figure of the month, per team and ClusterQueue."""

    ceilings: tuple[QueueCeiling, ...]
    preemption: Preemption | None  # None without Workloads
    waiting: tuple[TeamWaiting, ...]
    shares: tuple[TeamShare, ...]
    borrowing: tuple[BorrowingAhead, ...]
    missing: tuple[str, ...] = ()  # parts not read: "workloads", "metrics"


def queue_figures(
    inputs: QueueInputs, attributor: Attributor, month: Month, until: datetime, top: int
) -> QueueFigures:
    """The month's queue figures up to `until`."""
    hours = month.hours
    team_of = _team_of(inputs.quota, attributor)
    preemption: Preemption | None = None
    metrics = inputs.metrics
    pending: Mapping[str, float] = metrics.pending if metrics is not None else {}
    waited: Mapping[str, float] = {}
    if inputs.workloads is not None:
        lost = _evictions(inputs.workloads, attributor, team_of, month, until, inputs.quota)
        preemption = preempted_work(lost, inputs.flavor_prices, inputs.blended, top)
        spans = [_span(w, attributor, team_of) for w in inputs.workloads]
        waited = waited_gpu_hours([s for s in spans if s is not None], month.start, until)
        pending = _pending(inputs.workloads, until)
    waits = {
        queue: [Bucket(le, n) for le, n in buckets.items()]
        for queue, buckets in (metrics.wait if metrics is not None else {}).items()
    }
    waiting: tuple[TeamWaiting, ...] = ()
    if inputs.workloads is not None or metrics is not None:
        waiting = team_waiting(pending, waits, waited, team_of)
    shares = metrics.queue_share if metrics is not None else {}
    return QueueFigures(
        ceilings=queue_ceilings(inputs.quota, inputs.flavor_prices, hours),
        preemption=preemption,
        waiting=waiting,
        shares=fair_shares(shares, inputs.gpu_cost, team_of),
        borrowing=_borrowing(inputs, month, until, team_of),
        missing=tuple(sorted({*inputs.missing, *_metrics_missing(metrics)})),
    )


def _metrics_missing(metrics: KueueMetrics | None) -> tuple[str, ...]:
    """`metrics` without the source; `metrics:<part>` for a part Prometheus had no series of."""
    if metrics is None:
        return (METRICS,)
    return tuple(f"{METRICS}:{part}" for part in metrics.missing)


def _team_of(quota: Iterable[QueueQuota], attributor: Attributor) -> Callable[[str], str]:
    declared = {q.cluster_queue: q.team for q in quota}
    return lambda queue: declared.get(queue) or attributor.team_for_queue(queue)


def _team(w: WorkloadRecord, attributor: Attributor, team_of: Callable[[str], str]) -> str:
    """The team by the attribution labels, else the team of its ClusterQueue."""
    placed = attributor.place(w.namespace, w.labels).team
    if placed == UNALLOCATED and w.cluster_queue:
        return team_of(w.cluster_queue)
    return placed


def _evictions(
    workloads: Iterable[WorkloadRecord],
    attributor: Attributor,
    team_of: Callable[[str], str],
    month: Month,
    until: datetime,
    quota: Iterable[QueueQuota],
) -> list[Eviction]:
    """Each evicted workload's run, split over its eviction reasons by how often each came.

    Kueue keeps the time admitted over all past cycles, not per cycle: a workload evicted for
    two reasons has its run shared by their counts. It counts in the month of its last
    eviction (the Evicted condition's last change).
    """
    flavors = _only_gpu_flavor(quota)
    out = []
    for w in workloads:
        at = w.evicted_at
        if at is None or not w.evictions or not month.start <= at < until or w.ran_seconds <= 0:
            continue
        total = sum(w.evictions.values())
        flavor = w.gpu_flavor or flavors.get(w.cluster_queue, "")
        team = _team(w, attributor, team_of)
        for reason, n in w.evictions.items():
            hours = w.ran_seconds / 3600.0 * n / total
            out.append(Eviction(team, w.cluster_queue, flavor, reason, w.gpus, hours, w.key))
    return out


def _only_gpu_flavor(quota: Iterable[QueueQuota]) -> dict[str, str]:
    """A queue's GPU flavor when it has just one: where its evicted workloads must have run."""
    found: dict[str, set[str]] = defaultdict(set)
    for q in quota:
        if q.resource in GPU_RESOURCES:
            found[q.cluster_queue].add(q.flavor)
    return {queue: next(iter(f)) for queue, f in found.items() if len(f) == 1}


def _span(
    w: WorkloadRecord, attributor: Attributor, team_of: Callable[[str], str]
) -> PendingSpan | None:
    """The workload's current or last wait: from creation, or from its eviction while it
    waits again, to its quota reservation. A re-admitted workload's re-wait is not kept."""
    if w.gpus <= 0:
        return None
    team = _team(w, attributor, team_of)
    if w.evicted_now:
        assert w.evicted_at is not None
        return PendingSpan(team, w.gpus, w.evicted_at, w.finished_at)
    if w.evictions:
        return None
    return PendingSpan(team, w.gpus, w.created, w.quota_reserved_at or w.finished_at)


def _pending(workloads: Iterable[WorkloadRecord], until: datetime) -> dict[str, float]:
    """Workloads pending now, per ClusterQueue (their LocalQueue's)."""
    out: dict[str, float] = defaultdict(float)
    for w in workloads:
        if w.quota_reserved_at is None and w.finished_at is None and w.created <= until:
            out[w.cluster_queue] += 1
    return dict(out)


def _borrowing(
    inputs: QueueInputs, month: Month, until: datetime, team_of: Callable[[str], str]
) -> tuple[BorrowingAhead, ...]:
    """The month so far's borrowed GPU-hours at their pace over 30 days, at today's price."""
    elapsed = (until.timestamp() - month.start.timestamp()) / 3600.0
    priced = [q for q in inputs.quota if q.resource in GPU_RESOURCES]
    if elapsed <= 0 or not priced:
        return ()
    nominal: dict[str, float] = defaultdict(float)
    limits: dict[str, float] = defaultdict(float)
    money: dict[str, float] = defaultdict(float)
    for q in priced:
        nominal[q.team] += q.nominal
        limits[q.team] += min(q.lending_limit, q.nominal)
        money[q.team] += q.nominal * inputs.flavor_prices.get(q.flavor, inputs.blended or 0.0)
    borrowed, _ = month_borrowing(nominal, inputs.gpu_hours, limits, elapsed)
    window = WINDOW_DAYS * 24.0
    following = _next_month_hours(month)
    out: list[BorrowingAhead] = []
    for team, hours in sorted(borrowed.items()):
        if team not in nominal:
            continue  # a team with no quota does not borrow: Kueue does not queue it
        # Today's price: the team's GPU flavors' prices, weighted by its nominal quota.
        price = money[team] / nominal[team] if nominal[team] > 0 else (inputs.blended or 0.0)
        if not math.isfinite(price) or price <= 0:
            continue
        out.extend(borrowing_ahead({team: hours * window / elapsed}, price, following))
    return tuple(out)


def _next_month_hours(month: Month) -> float:
    zone = month.start.tzinfo
    # A month built on a fixed offset (tests, UTC) has no zone rules: it has no DST either.
    rules = zone if isinstance(zone, ZoneInfo) else ZoneInfo("UTC")
    return Month.of(month.end, rules).hours

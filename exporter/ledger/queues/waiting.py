"""Waiting: GPU-hours requested while pending, and admission wait percentiles (pure).

Waiting is a time, not money: these figures are shown beside a team's cost, never added to it.
The GPU-hours are each workload's GPU request times its pending span within the month; the
percentiles come from Kueue's `kueue_admission_wait_time_seconds` histogram, interpolated
within a bucket as Prometheus' `histogram_quantile` does.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

__all__ = [
    "QUANTILES",
    "Bucket",
    "PendingSpan",
    "TeamWaiting",
    "histogram_quantile",
    "team_waiting",
    "waited_gpu_hours",
]

QUANTILES = (0.5, 0.9, 0.99)


@dataclass(frozen=True)
class Bucket:
    """One cumulative histogram bucket: how many observations were at most `le` seconds."""

    le: float
    count: float


@dataclass(frozen=True)
class PendingSpan:
    """A workload's wait: its team, GPU request, and from when to when it was pending."""

    team: str
    gpus: float
    start: datetime  # created, or requeued after an eviction
    end: datetime | None  # admitted; None while still pending


@dataclass(frozen=True)
class TeamWaiting:
    """One team's waiting: pending workloads now, GPU-hours waited, wait percentiles (s)."""

    team: str
    pending_workloads: float
    waited_gpu_hours: float
    percentiles: Mapping[float, float | None]  # quantile -> seconds; None without observations


def waited_gpu_hours(
    spans: Iterable[PendingSpan], start: datetime, end: datetime
) -> dict[str, float]:
    """GPU-hours each team requested while pending, within [start, end)."""
    out: dict[str, list[float]] = defaultdict(list)
    for s in spans:
        lo = max(s.start, start)
        hi = min(s.end if s.end is not None else end, end)
        # Timestamps: a span across a DST change is its real length.
        seconds = hi.timestamp() - lo.timestamp()
        if seconds > 0:
            out[s.team].append(s.gpus * seconds / 3600.0)
    # Exact sums: the figure must not depend on the order Kueue listed its workloads in.
    return {team: math.fsum(hours) for team, hours in sorted(out.items())}


def histogram_quantile(q: float, buckets: Sequence[Bucket]) -> float | None:
    """The q-quantile of cumulative buckets as Prometheus computes it; None when empty.

    Linear within the bucket that holds the rank, the first bucket starting at 0, and the
    highest finite bound when the rank falls in the +Inf bucket.
    """
    ordered = sorted(buckets, key=lambda b: b.le)
    if not ordered or not math.isinf(ordered[-1].le):
        return None
    total = ordered[-1].count
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for b in ordered:
        if b.count >= rank:
            if math.isinf(b.le):
                return lower
            inside = b.count - below
            if inside <= 0:
                return b.le
            return lower + (b.le - lower) * (rank - below) / inside
        lower, below = b.le, b.count
    return lower


def team_waiting(
    pending: Mapping[str, float],
    waits: Mapping[str, Sequence[Bucket]],
    waited: Mapping[str, float],
    team_for_queue: Callable[[str], str],
) -> tuple[TeamWaiting, ...]:
    """Per team: pending workloads and wait histograms summed over its ClusterQueues."""
    counts: dict[str, float] = defaultdict(float)
    for queue, n in pending.items():
        counts[team_for_queue(queue)] += n
    merged: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    for queue, buckets in waits.items():
        # Buckets of the same bound add across queues, as `sum by (le)` does.
        for b in buckets:
            merged[team_for_queue(queue)][b.le] += b.count
    teams = sorted({*counts, *merged, *waited})
    return tuple(
        TeamWaiting(
            team,
            counts.get(team, 0.0),
            waited.get(team, 0.0),
            {
                q: histogram_quantile(q, [Bucket(le, c) for le, c in merged[team].items()])
                for q in QUANTILES
            },
        )
        for team in teams
    )

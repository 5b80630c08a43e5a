"""Preempted work: GPU-hours a workload ran before Kueue evicted it, at the applied price (pure).

The money is not new: the GPU-hours were already charged to the team through OpenCost. This
says which part of that charge bought compute that was thrown away, by eviction reason
(`Preempted`, `PodsReadyTimeout`, ...), so the figures sit beside the bill, never on top of it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["Eviction", "PreemptedWork", "Preemption", "TopPreempted", "preempted_work"]


@dataclass(frozen=True)
class Eviction:
    """One workload evicted after running: its team, queue, GPU flavor, reason and run."""

    team: str
    cluster_queue: str
    flavor: str
    reason: str  # the Evicted condition's reason: Preempted, PodsReadyTimeout, ...
    gpus: float  # GPUs the workload held (its pod sets' GPU requests x count)
    hours: float  # how long it ran, admitted, before the eviction
    workload: str = ""  # namespace/name, shown only among the top N

    @property
    def gpu_hours(self) -> float:
        """The GPU-hours that ran and were lost."""
        return self.gpus * self.hours


@dataclass(frozen=True)
class PreemptedWork:
    """The thrown-away compute of one team, ClusterQueue and eviction reason."""

    team: str
    cluster_queue: str
    reason: str
    workloads: int
    gpu_hours: float
    cost: float


@dataclass(frozen=True)
class TopPreempted:
    """One of the most expensive evicted workloads (the only per-workload figure)."""

    team: str
    cluster_queue: str
    workload: str
    reason: str
    gpu_hours: float
    cost: float


@dataclass(frozen=True)
class Preemption:
    """Every team's preempted work, the top N workloads, and what no price covered."""

    work: tuple[PreemptedWork, ...]  # sorted by team, queue, reason
    top: tuple[TopPreempted, ...]  # most costly first
    unpriced_gpu_hours: float = 0.0  # flavors nothing prices: counted, never guessed

    def by_team(self) -> dict[str, float]:
        """The thrown-away cost per team, over its queues and reasons."""
        out: dict[str, list[float]] = defaultdict(list)
        for w in self.work:
            out[w.team].append(w.cost)
        return {team: math.fsum(costs) for team, costs in sorted(out.items())}


def preempted_work(
    evictions: Iterable[Eviction],
    prices: Mapping[str, float],
    fallback: float | None = None,
    top: int = 10,
) -> Preemption:
    """Price each eviction's GPU-hours at its flavor's price (else `fallback`), and sum them.

    An eviction no price covers is left out of the money and its GPU-hours counted apart.
    """
    # Exact sums (fsum), so the figures do not depend on the order Kueue listed workloads in.
    sums: dict[tuple[str, str, str], list[tuple[float, float]]] = defaultdict(list)
    priced: list[TopPreempted] = []
    unpriced: list[float] = []
    for e in evictions:
        price = prices.get(e.flavor, fallback)
        if price is None:
            unpriced.append(e.gpu_hours)
            continue
        cost = e.gpu_hours * price
        sums[(e.team, e.cluster_queue, e.reason)].append((e.gpu_hours, cost))
        priced.append(
            TopPreempted(e.team, e.cluster_queue, e.workload, e.reason, e.gpu_hours, cost)
        )
    work = tuple(
        PreemptedWork(
            team,
            queue,
            reason,
            len(runs),
            math.fsum(h for h, _ in runs),
            math.fsum(c for _, c in runs),
        )
        for (team, queue, reason), runs in sorted(sums.items())
    )
    # Ties broken by name, so the top N does not depend on the order Kueue listed them in.
    ranked = sorted(priced, key=lambda t: (-t.cost, t.team, t.cluster_queue, t.workload, t.reason))
    return Preemption(work, tuple(ranked[: max(0, top)]), math.fsum(unpriced))

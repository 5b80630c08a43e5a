"""What one OpenCost read gives the join: its windows' allocation sets and the GPU nodes' assets.

Types only, with no HTTP client: the ledger, the exposition and the report import these, and a
join in a process of its own (the report, a bench) need not load what fetches them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property

from exporter.errors import UpstreamIncomplete
from exporter.sources.opencost.records import Allocation, merge_into
from exporter.sources.reading import Reading

__all__ = ["AllocationSet", "GpuNode", "OpenCostSnapshot", "RunningSums"]

SOURCE = "opencost"


@dataclass(frozen=True)
class GpuNode:
    """One node that has GPUs, as OpenCost's assets price it over a window."""

    name: str
    gpu_count: float
    gpu_hours: float
    gpu_cost: float
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def price(self) -> float | None:
        """The node's GPU-hour price over the window, if it had GPU-hours."""
        return self.gpu_cost / self.gpu_hours if self.gpu_hours > 0 else None


@dataclass(frozen=True)
class AllocationSet:
    """Every allocation of one window, the cluster's idle cost per resource, and node costs."""

    start: datetime
    end: datetime
    allocations: tuple[Allocation, ...]
    idle: Mapping[str, float]
    node_costs: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    @property
    def hours(self) -> float:
        """Length of the window in hours."""
        return (self.end - self.start).total_seconds() / 3600.0

    def total(self) -> float:
        """The cluster's cost in the window: allocations plus idle."""
        return self._spent + sum(self.idle.values())

    # Sums over every allocation, kept: a join asks for each more than once (the cluster's
    # figures, the window's cost, the true-up), 50,000 allocations a time at scale.
    @cached_property
    def _spent(self) -> float:
        return sum(sum(a.costs.values()) for a in self.allocations)

    @cached_property
    def gpu_spent(self) -> float:
        """What the allocations' GPUs cost in the window (idle GPUs not included)."""
        return sum(a.costs.get("gpu", 0.0) for a in self.allocations)

    def empty(self) -> bool:
        """True when OpenCost reported nothing at all: no allocation and no idle cost."""
        return not self.allocations and not any(self.idle.values())


@dataclass(frozen=True)
class OpenCostSnapshot:
    """The two windows the exporter needs: the recent one (for rates) and the month so far."""

    rate: AllocationSet
    month: AllocationSet
    dropped: Mapping[str, int] = field(default_factory=dict)
    gpu_nodes: tuple[GpuNode, ...] | None = None  # the rate window's node assets, if read
    repairs: int = 0  # kept records of closed days that this refresh's reconcile corrected
    days: tuple[AllocationSet, ...] = ()  # each local day, when the month was read by day

    def as_of(self, reading: Reading) -> OpenCostSnapshot:
        """The month to date at `reading.until`, summed from the days read (`Reading.by_day`)."""
        return next(self.as_of_each([reading]))

    def as_of_each(self, readings: Sequence[Reading]) -> Iterator[OpenCostSnapshot]:
        """The month to date at each reading's end in turn (readings in order): each day is
        added to running sums once, not summed again from the month's start for every day."""
        if not self.days:
            raise ValueError(f"{SOURCE}: the month was not read day by day")
        days = sorted(self.days, key=lambda d: d.end)
        sums, added = RunningSums(), 0
        for reading in readings:
            while added < len(days) and days[added].end <= reading.until:
                day = days[added]
                sums.add(day.allocations, day.idle, day.node_costs)
                added += 1
            month = AllocationSet(
                self.month.start, reading.until, sums.allocations(), sums.idle(), sums.node_costs()
            )
            yield replace(self, month=month, days=())

    def check_after(self, previous: object | None) -> None:
        """An empty month-to-date after the same month had data is a lost read, not zero cost.

        Month-to-date only grows within a month, so nothing confirms an empty reply; a new
        month (another start) legitimately begins again from nothing.
        """
        if not isinstance(previous, OpenCostSnapshot) or previous.month.start != self.month.start:
            return
        if self.month.empty() and not previous.month.empty():
            raise UpstreamIncomplete(
                f"{SOURCE}: /allocation returned nothing for the month to date, "
                "which had data in the last good read; keeping that read"
            )


class RunningSums:
    """Days added one at a time, in day order: the allocations summed by name (the first
    labels kept), and idle and node costs per resource, as one left-to-right sum would give."""

    def __init__(self) -> None:
        self._merged: dict[str, Allocation] = {}
        self._idle: dict[str, float] = {}
        self._nodes: dict[str, dict[str, float]] = {}

    def add(
        self,
        allocations: Iterable[Allocation],
        idle: Mapping[str, float],
        node_costs: Mapping[str, Mapping[str, float]] | None = None,
    ) -> None:
        """Add one day."""
        merge_into(self._merged, allocations)
        for resource, amount in idle.items():
            self._idle[resource] = self._idle.get(resource, 0.0) + amount
        for node, costs in (node_costs or {}).items():
            total = self._nodes.setdefault(node, {})
            for resource, amount in costs.items():
                total[resource] = total.get(resource, 0.0) + amount

    def allocations(self) -> tuple[Allocation, ...]:
        """The allocations so far, summed by name, sorted by name."""
        return tuple(self._merged[k] for k in sorted(self._merged))

    def idle(self) -> dict[str, float]:
        """Idle so far per resource."""
        return dict(self._idle)

    def node_costs(self) -> dict[str, dict[str, float]]:
        """Node costs so far per node and resource."""
        return {node: dict(costs) for node, costs in self._nodes.items()}

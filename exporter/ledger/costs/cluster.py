"""The whole cluster's cost and idle per resource, as OpenCost reports them before any policy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from exporter.ledger.costs.ledger import IDLE_RESOURCES
from exporter.sources.opencost.source import AllocationSet, OpenCostSnapshot

__all__ = ["ClusterCosts", "cluster_costs", "resource_costs"]


@dataclass(frozen=True)
class ClusterCosts:
    """The cluster's cost rate, and per idle resource its cost and idle rates and month's idle.

    The policies move idle onto teams as one `idle_share` component for all resources, so only
    these figures can tell idle GPUs from idle CPU and memory. Every resource is present (0 when
    nothing sits idle); the rates are None when OpenCost's recent window covers no time.
    """

    per_hour: float
    resource_per_hour: Mapping[str, float] | None
    idle_per_hour: Mapping[str, float] | None
    idle_month: Mapping[str, float]
    month_idle: float  # every resource's idle this month, whatever the policy (the report's)


def resource_costs(window: AllocationSet) -> dict[str, float]:
    """What each idle resource cost the cluster in a window: allocations plus idle."""
    out = {r: window.idle.get(r, 0.0) for r in IDLE_RESOURCES}
    for allocation in window.allocations:
        for resource in IDLE_RESOURCES:
            out[resource] += allocation.costs.get(resource, 0.0)
    return out


def cluster_costs(opencost: OpenCostSnapshot, per_hour: float) -> ClusterCosts:
    """The cluster's figures from OpenCost's windows; `per_hour` is the hourly window's cost."""
    rate, month = opencost.rate, opencost.month
    resource_per_hour = idle_per_hour = None
    if rate.hours > 0:
        totals = resource_costs(rate)
        resource_per_hour = {r: totals[r] / rate.hours for r in IDLE_RESOURCES}
        idle_per_hour = {r: rate.idle.get(r, 0.0) / rate.hours for r in IDLE_RESOURCES}
    idle_month = {r: month.idle.get(r, 0.0) for r in IDLE_RESOURCES}
    total_idle = sum(month.idle.values())
    return ClusterCosts(per_hour, resource_per_hour, idle_per_hour, idle_month, total_idle)

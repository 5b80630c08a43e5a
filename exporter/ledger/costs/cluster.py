"""The whole cluster's cost and idle per resource, as OpenCost reports them before any policy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from exporter.ledger.costs.ledger import IDLE_RESOURCES
from exporter.sources.opencost.snapshot import AllocationSet, OpenCostSnapshot

__all__ = ["ClusterCosts", "GpuCharge", "cluster_costs", "gpu_money", "resource_costs"]


@dataclass(frozen=True)
class GpuCharge:
    """The cluster's GPU money at the prices applied, beside what OpenCost itself charged.

    Both count every GPU-hour, used and idle. The rates are None when OpenCost's recent window
    covers no time. Equal when the config governs no price.
    """

    applied_per_hour: float | None
    opencost_per_hour: float | None
    applied_month: float
    opencost_month: float

    @property
    def difference_per_hour(self) -> float | None:
        """Applied minus OpenCost's, per hour (None without a rate)."""
        if self.applied_per_hour is None or self.opencost_per_hour is None:
            return None
        return self.applied_per_hour - self.opencost_per_hour

    @property
    def difference_month(self) -> float:
        """Applied minus OpenCost's, over the month to date."""
        return self.applied_month - self.opencost_month


def gpu_money(window: AllocationSet) -> float:
    """A window's GPU money: every allocation's GPU cost and the idle GPU cost."""
    return window.gpu_spent + window.idle.get("gpu", 0.0)


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
    # The month's cost every policy sums to: OpenCost's, each GPU-hour at the applied price.
    month_total: float = 0.0
    gpu_charge: GpuCharge | None = None


def resource_costs(window: AllocationSet) -> dict[str, float]:
    """What each idle resource cost the cluster in a window: allocations plus idle."""
    out = {r: window.idle.get(r, 0.0) for r in IDLE_RESOURCES}
    for allocation in window.allocations:
        for resource in IDLE_RESOURCES:
            out[resource] += allocation.costs.get(resource, 0.0)
    return out


def cluster_costs(
    opencost: OpenCostSnapshot, per_hour: float, own: OpenCostSnapshot | None = None
) -> ClusterCosts:
    """The cluster's figures from OpenCost's windows; `per_hour` is the hourly window's cost.

    `opencost` is at the applied GPU prices, `own` as OpenCost charged it (the same by default).
    """
    rate, month = opencost.rate, opencost.month
    resource_per_hour = idle_per_hour = None
    if rate.hours > 0:
        totals = resource_costs(rate)
        resource_per_hour = {r: totals[r] / rate.hours for r in IDLE_RESOURCES}
        idle_per_hour = {r: rate.idle.get(r, 0.0) / rate.hours for r in IDLE_RESOURCES}
    idle_month = {r: month.idle.get(r, 0.0) for r in IDLE_RESOURCES}
    total_idle = sum(month.idle.values())
    charged = opencost if own is None else own
    charge = GpuCharge(
        gpu_money(rate) / rate.hours if rate.hours > 0 else None,
        gpu_money(charged.rate) / charged.rate.hours if charged.rate.hours > 0 else None,
        gpu_money(month),
        gpu_money(charged.month),
    )
    return ClusterCosts(
        per_hour,
        resource_per_hour,
        idle_per_hour,
        idle_month,
        total_idle,
        month_total=month.total(),
        gpu_charge=charge,
    )

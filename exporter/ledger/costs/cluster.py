"""Cluster-wide samples for the rules: cost and idle per resource, the month's bounds (pure)."""

from __future__ import annotations

from collections.abc import Iterable

from exporter.calendar import Month
from exporter.exposition.catalogue.calendar import (
    MONTH_END_TIMESTAMP_SECONDS,
    MONTH_START_TIMESTAMP_SECONDS,
)
from exporter.exposition.catalogue.cluster import (
    CLUSTER_IDLE_COST_MONTH_TO_DATE,
    CLUSTER_IDLE_COST_PER_HOUR,
    CLUSTER_RESOURCE_COST_PER_HOUR,
)
from exporter.exposition.samples import Sample
from exporter.ledger.costs.ledger import IDLE_RESOURCES
from exporter.sources.opencost.source import AllocationSet, OpenCostSnapshot

__all__ = ["idle_samples", "month_samples", "resource_costs"]


def resource_costs(window: AllocationSet) -> dict[str, float]:
    """What each idle resource cost the cluster in a window: allocations plus idle."""
    out = {r: window.idle.get(r, 0.0) for r in IDLE_RESOURCES}
    for allocation in window.allocations:
        for resource in IDLE_RESOURCES:
            out[resource] += allocation.costs.get(resource, 0.0)
    return out


def idle_samples(opencost: OpenCostSnapshot) -> Iterable[Sample]:
    """Idle and total cost per resource, from OpenCost's figures before any idle policy.

    The policies move idle onto teams as one `idle_share` component for all resources, so
    only these series can tell idle GPUs from idle CPU and memory. Every resource is always
    written (0 when nothing sits idle), so a ratio over them never goes missing.
    """
    rate, month = opencost.rate, opencost.month
    if rate.hours > 0:
        totals = resource_costs(rate)
        for resource in IDLE_RESOURCES:
            idle = rate.idle.get(resource, 0.0) / rate.hours
            total = totals[resource] / rate.hours
            yield Sample.of(CLUSTER_RESOURCE_COST_PER_HOUR, total, resource=resource)
            yield Sample.of(CLUSTER_IDLE_COST_PER_HOUR, idle, resource=resource)
    for resource in IDLE_RESOURCES:
        amount = month.idle.get(resource, 0.0)
        yield Sample.of(CLUSTER_IDLE_COST_MONTH_TO_DATE, amount, resource=resource)


def month_samples(month: Month) -> Iterable[Sample]:
    """The bounds of the calendar month, as Unix times.

    Prometheus only knows UTC calendars; with these a rule counts the hours left in the
    exporter's own month (`end - time()`), whatever the zone and its daylight-saving changes.
    """
    yield Sample.of(MONTH_START_TIMESTAMP_SECONDS, month.start.timestamp())
    yield Sample.of(MONTH_END_TIMESTAMP_SECONDS, month.end.timestamp())

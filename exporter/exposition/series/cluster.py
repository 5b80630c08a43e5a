"""Cluster series: the cluster's cost and idle per resource before any policy, teams folded."""

from __future__ import annotations

from exporter.exposition.catalogue.cluster import (
    CLUSTER_COST_PER_HOUR,
    CLUSTER_GPU_PRICE_DIFFERENCE_MONTH_TO_DATE,
    CLUSTER_GPU_PRICE_DIFFERENCE_PER_HOUR,
    CLUSTER_IDLE_COST_MONTH_TO_DATE,
    CLUSTER_IDLE_COST_PER_HOUR,
    CLUSTER_RESOURCE_COST_PER_HOUR,
    TEAMS_OVER_CAP,
)
from exporter.exposition.samples import Sample
from exporter.ledger.costs.cluster import ClusterCosts
from exporter.ledger.result import Chargeback

__all__ = ["cluster_samples", "series"]


def series(chargeback: Chargeback) -> list[Sample]:
    """With OpenCost: the cluster's figures and how many teams the cap folded."""
    if chargeback.cluster is None:
        return []
    folded = float(len(chargeback.folded_teams))
    return [*cluster_samples(chargeback.cluster), Sample.of(TEAMS_OVER_CAP, folded)]


def cluster_samples(cluster: ClusterCosts) -> list[Sample]:
    """Cost rate, and per resource total and idle rates and the month's idle (always written,
    0 when nothing sits idle, so a ratio over them never goes missing)."""
    out = [Sample.of(CLUSTER_COST_PER_HOUR, cluster.per_hour)]
    if cluster.resource_per_hour is not None and cluster.idle_per_hour is not None:
        for resource, total in cluster.resource_per_hour.items():
            idle = cluster.idle_per_hour[resource]
            out.append(Sample.of(CLUSTER_RESOURCE_COST_PER_HOUR, total, resource=resource))
            out.append(Sample.of(CLUSTER_IDLE_COST_PER_HOUR, idle, resource=resource))
    for resource, amount in cluster.idle_month.items():
        out.append(Sample.of(CLUSTER_IDLE_COST_MONTH_TO_DATE, amount, resource=resource))
    charge = cluster.gpu_charge
    if charge is not None:
        if charge.difference_per_hour is not None:
            out.append(Sample.of(CLUSTER_GPU_PRICE_DIFFERENCE_PER_HOUR, charge.difference_per_hour))
        out.append(Sample.of(CLUSTER_GPU_PRICE_DIFFERENCE_MONTH_TO_DATE, charge.difference_month))
    return out

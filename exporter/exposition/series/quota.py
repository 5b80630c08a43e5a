"""Quota series: every ClusterQueue's quota per flavor and resource, as Kueue reports it."""

from __future__ import annotations

from collections.abc import Iterable

from exporter.exposition.catalogue.quota import (
    QUOTA_BORROWED,
    QUOTA_BORROWING_LIMIT,
    QUOTA_LENDING_LIMIT,
    QUOTA_LENT,
    QUOTA_NOMINAL,
    QUOTA_USAGE,
)
from exporter.exposition.samples import Sample
from exporter.ledger.costs.quota import QueueQuota
from exporter.ledger.result import Chargeback

__all__ = ["quota_samples", "series"]


def series(chargeback: Chargeback) -> list[Sample]:
    """With Kueue: every queue's quota."""
    return quota_samples(chargeback.quota or ())


def quota_samples(quotas: Iterable[QueueQuota]) -> list[Sample]:
    """The `quota_*` families, one series per queue, flavor and resource."""
    out: list[Sample] = []
    for q in quotas:
        labels = {
            "team": q.team,
            "cluster_queue": q.cluster_queue,
            "cohort": q.cohort,
            "flavor": q.flavor,
            "resource": q.resource,
        }
        values = (
            (QUOTA_NOMINAL, q.nominal),
            (QUOTA_USAGE, q.usage),
            (QUOTA_BORROWED, q.borrowed),
            (QUOTA_LENT, q.lent),
            (QUOTA_BORROWING_LIMIT, q.borrowing_limit),
            (QUOTA_LENDING_LIMIT, q.lending_limit),
        )
        out.extend(Sample.of(name, value, **labels) for name, value in values)
    return out

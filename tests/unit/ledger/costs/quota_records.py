"""Quota records and the three-team attributor the quota tests share."""

from __future__ import annotations

from exporter.config.schema import Config
from exporter.ledger.attribution import Attributor
from exporter.sources.kueue.records import QuotaRecord

__all__ = ["GPU", "attributor", "gpu_q"]

GPU = "nvidia.com/gpu"


def attributor() -> Attributor:
    """Teams a, b and c, each with its own ClusterQueue cq-a, cq-b, cq-c."""
    teams = [
        {"name": "a", "cluster_queues": ["cq-a"]},
        {"name": "b", "cluster_queues": ["cq-b"]},
        {"name": "c", "cluster_queues": ["cq-c"]},
    ]
    return Attributor(Config.model_validate({"teams": teams}))


def gpu_q(
    name: str, nominal: float, usage: float, borrowed: float = 0.0, **kw: float
) -> QuotaRecord:
    """One ClusterQueue's h100 GPU quota in cohort `pool`."""
    return QuotaRecord(name, "pool", "h100", GPU, nominal, usage=usage, borrowed=borrowed, **kw)

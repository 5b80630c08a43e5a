"""A closed month as the sources' snapshots: the seed's (docs/chargeback.md's first worked
example) or any like it, with a self-hosted model served from its own namespace if asked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from exporter.calendar import Month
from exporter.config.schema import Config, IdlePolicy
from exporter.sources.kueue.flavors import FlavorRecord
from exporter.sources.kueue.records import KueueSnapshot, QuotaRecord
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.snapshot import AllocationSet, GpuNode, OpenCostSnapshot
from exporter.sources.table import Snapshots

__all__ = ["H100", "NOVEMBER", "SEED", "SeedMonth", "month_config", "month_snapshots"]

H100 = "NVIDIA H100 80GB HBM3"
GPU = "nvidia.com/gpu"
# November 2026 in UTC: 720 hours.
NOVEMBER = Month(datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))


@dataclass(frozen=True)
class SeedMonth:
    """One flavor of GPUs at one price: each team's GPU-hours and nominal quota (cq-<team>),
    and what the cluster held; per GPU-hour CPU costs `cpu` and storage `storage`; idle CPU
    `idle_cpu`."""

    used: Mapping[str, float]
    quota: Mapping[str, float]
    gpus: int
    price: float
    cpu: float = 0.0
    idle_cpu: float = 0.0
    storage: float = 0.0  # a GPU-hour's storage, which no idle policy shares
    serving: Mapping[str, float] = field(default_factory=dict)  # namespace -> GPU-hours

    @property
    def idle_hours(self) -> float:
        """The GPU-hours nobody used."""
        return self.gpus * NOVEMBER.hours - sum(self.used.values()) - sum(self.serving.values())


# docs/chargeback.md: 4 GPUs at 1.40 over 720 hours; A holds 2 and uses 1,080 GPU-hours, B holds
# 1 and uses 432, C holds 1 and uses 252.
SEED = SeedMonth({"a": 1080.0, "b": 432.0, "c": 252.0}, {"a": 2.0, "b": 1.0, "c": 1.0}, 4, 1.40)


def _alloc(namespace: str, gpu_hours: float, month: SeedMonth) -> Allocation:
    costs = {"gpu": gpu_hours * month.price, "cpu": month.cpu * gpu_hours}
    if month.storage:
        costs["storage"] = month.storage * gpu_hours
    name = f"n1/{namespace}/job:x"
    return Allocation(name, namespace, "n1", {}, {}, costs, gpu_hours, H100)


def _window(month: SeedMonth, start: datetime, end: datetime, share: float) -> AllocationSet:
    hours = {f"ns-{t}": h for t, h in month.used.items()} | dict(month.serving)
    allocations = tuple(_alloc(ns, h * share, month) for ns, h in sorted(hours.items()) if h)
    idle = {"gpu": month.idle_hours * share * month.price, "cpu": month.idle_cpu * share}
    return AllocationSet(start, end, allocations, idle)


def month_snapshots(month: SeedMonth, litellm: LiteLLMSnapshot | None = None) -> Snapshots:
    """The month as OpenCost (one window, and its last hour for the rate) and Kueue read it."""
    whole = _window(month, NOVEMBER.start, NOVEMBER.end, 1.0)
    rate = _window(month, NOVEMBER.end - timedelta(hours=1), NOVEMBER.end, 1 / NOVEMBER.hours)
    queues = tuple(
        QuotaRecord(f"cq-{t}", "pool", "h100", GPU, gpus) for t, gpus in sorted(month.quota.items())
    )
    flavors = (FlavorRecord("h100", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}),)
    label = {"nvidia_com_gpu_product": "NVIDIA-H100-80GB-HBM3"}
    node = GpuNode("n1", month.gpus, month.gpus, month.gpus * month.price, label)
    opencost = OpenCostSnapshot(rate=rate, month=whole, gpu_nodes=(node,))
    kueue = KueueSnapshot(queues, flavors=flavors)
    return Snapshots(opencost=opencost, kueue=kueue, litellm=litellm)


def month_config(policy: IdlePolicy, teams: list[str], **extra: Any) -> Config:
    """A config declaring each team by its namespace and ClusterQueue, reading Kueue."""
    declared = [
        {"name": t, "namespaces": [f"ns-{t}"], "cluster_queues": [f"cq-{t}"]} for t in teams
    ]
    return Config.model_validate(
        {
            "timezone": "UTC",
            "idle_policy": policy.value,
            "teams": declared,
            "sources": {"kueue": {"url": "https://k8s.invalid:6443"}},
            **extra,
        }
    )

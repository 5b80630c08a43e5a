"""What the history read hands the advice: spreads per GPU or MIG instance and per queue."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["DeviceHistory", "History", "QueueHistory", "Spread"]


@dataclass(frozen=True)
class Spread:
    """Percentiles of one series over the window, and how many samples they rest on."""

    p50: float
    p95: float
    max: float
    samples: int

    @property
    def finite(self) -> bool:
        """Whether every figure is a number (Prometheus spells a gap as NaN)."""
        return all(math.isfinite(v) for v in (self.p50, self.p95, self.max))

    @property
    def ordered(self) -> bool:
        """Whether 0 <= p50 <= p95 <= max, as percentiles of one series must be."""
        return 0 <= self.p50 <= self.p95 + 1e-9 and self.p95 <= self.max + 1e-9


@dataclass(frozen=True)
class DeviceHistory:
    """One GPU or MIG instance as one workload held it over the window."""

    namespace: str
    pod: str
    container: str
    node: str
    gpu: str
    uuid: str
    model: str
    mig_profile: str  # "" on a whole GPU
    pod_labels: tuple[tuple[str, str], ...]
    framebuffer: Spread | None  # MiB used
    activity: Spread | None  # 0-1 of the device: engine activity, else GPU_UTIL / 100
    idle_share: float | None  # share of the samples below the idle threshold
    gpu_resets: int = 0  # resets of the GPU's energy counter in the window

    @property
    def labels(self) -> dict[str, str]:
        """The pod labels as a mapping, for attribution."""
        return dict(self.pod_labels)

    @property
    def workload(self) -> str:
        """The workload as advice names it: namespace/pod."""
        return f"{self.namespace}/{self.pod}"


@dataclass(frozen=True)
class QueueHistory:
    """One ClusterQueue's GPU quota and use over the window, from the exporter's own series."""

    cluster_queue: str
    flavor: str
    resource: str
    nominal: float  # the window's mean nominal quota
    usage: Spread  # GPUs in use by admitted workloads


@dataclass(frozen=True)
class History:
    """The window read, its step, and the records the read dropped by reason."""

    window_seconds: float
    step_seconds: float
    devices: tuple[DeviceHistory, ...] = ()
    queues: tuple[QueueHistory, ...] | None = None  # None: no quota history configured
    dropped: Mapping[str, int] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        """The most samples one series can have in the window."""
        return math.floor(self.window_seconds / self.step_seconds) + 1

    def check_after(self, previous: object | None) -> None:
        """Any window may follow any other: each is read whole (the refresher's Audited)."""
        del previous

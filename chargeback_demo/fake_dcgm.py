"""A fake dcgm-exporter: GET /metrics in the 4.x text format, derived from the demo cluster.

Label order follows dcgm-exporter's template: gpu, UUID, pci_bus_id, device, modelName,
Hostname, then the sorted labels (DCGM_FI_DRIVER_VERSION, pod labels when enabled), then the
sorted attributes (container, namespace, pod). An idle GPU has no pod attributes. Options cover
the variants seen in the field: `hostname` (unreleased main), empty pod labels (exporters up to
3.3.5-3.4.0), and `--use-old-namespace` (pod_name/pod_namespace/container_name, lowercase uuid).
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from chargeback_demo.cluster import Cluster, Workload
from chargeback_demo.httpfake import FakeRequest, FakeResponse, text_response
from exporter.clock import Clock

__all__ = ["FakeDcgmOptions", "gpu_uuid", "make_handler", "render_metrics"]

DRIVER_VERSION = "550.90.07"
_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_SANITISE = re.compile(r"[^a-zA-Z0-9_]")


@dataclass(frozen=True)
class FakeDcgmOptions:
    """Which dcgm-exporter variant the fake imitates."""

    lowercase_hostname: bool = False  # `hostname` instead of `Hostname`
    empty_pod_labels: bool = False  # idle GPUs carry container="",namespace="",pod=""
    old_namespace: bool = False  # --use-old-namespace
    pod_labels: bool = False  # --kubernetes-enable-pod-labels


@dataclass(frozen=True)
class _Gauge:
    name: str
    help: str
    value: Callable[[Workload | None, float], str]


def _util(holder: Workload | None, use: float) -> str:
    return str(round(use * 100))


def _fb_used(holder: Workload | None, use: float) -> str:
    return "0" if holder is None else str(18_000 + round(use * 50_000))


def _power(holder: Workload | None, use: float) -> str:
    return f"{70.0 + 600.0 * use:.6f}"


def _engine(holder: Workload | None, use: float) -> str:
    return f"{use:.6f}"


_GAUGES = (
    _Gauge("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", _util),
    _Gauge("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", _fb_used),
    _Gauge("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", _power),
    _Gauge(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", _engine
    ),
)


def gpu_uuid(cluster: Cluster, index: int) -> str:
    """A stable, realistic-looking UUID for GPU `index` of the demo node."""
    return _uuid(f"{cluster.name}/{cluster.node}/{index}")


@functools.cache
def _uuid(name: str) -> str:
    # Rendered for every GPU of every scrape, and of every 5 minutes of a backfilled month.
    return f"GPU-{uuid.uuid5(uuid.NAMESPACE_URL, name)}"


def _labels(cluster: Cluster, index: int, holder: Workload | None, options: FakeDcgmOptions) -> str:
    pairs = [
        ("gpu", str(index)),
        ("uuid" if options.old_namespace else "UUID", gpu_uuid(cluster, index)),
        ("pci_bus_id", f"00000000:{0x18 + 0x12 * index:02X}:00.0"),
        ("device", f"nvidia{index}"),
        ("modelName", cluster.gpu_model),
        ("hostname" if options.lowercase_hostname else "Hostname", cluster.node),
    ]
    sorted_labels = {"DCGM_FI_DRIVER_VERSION": DRIVER_VERSION}
    if options.pod_labels and holder is not None:
        sorted_labels.update({_SANITISE.sub("_", k): v for k, v in holder.labels.items()})
    pairs.extend(sorted(sorted_labels.items()))
    if holder is not None or options.empty_pod_labels:
        names = (
            ("container_name", "pod_name", "pod_namespace")
            if options.old_namespace
            else ("container", "pod", "namespace")
        )
        values = ("", "", "") if holder is None else (holder.name, holder.pod, holder.namespace)
        pairs.extend(sorted(zip(names, values, strict=True)))
    return ",".join(f'{k}="{v}"' for k, v in pairs)


def render_metrics(cluster: Cluster, now: datetime, options: FakeDcgmOptions) -> str:
    """The /metrics body at instant `now`."""
    lines: list[str] = []
    for gauge in _GAUGES:
        lines.append(f"# HELP {gauge.name} {gauge.help}")
        lines.append(f"# TYPE {gauge.name} gauge")
        for index in range(cluster.gpu_count):
            holder = cluster.gpu_holder(index, now)
            use = holder.utilisation_at(now) if holder is not None else 0.0
            labels = _labels(cluster, index, holder, options)
            lines.append(f"{gauge.name}{{{labels}}} {gauge.value(holder, use)}")
    return "\n".join(lines) + "\n"


def make_handler(
    cluster: Cluster, clock: Clock, options: FakeDcgmOptions | None = None
) -> Callable[[FakeRequest], FakeResponse]:
    """A request handler serving GET /metrics and GET /health, like dcgm-exporter on :9400."""
    chosen = options or FakeDcgmOptions()

    def handle(request: FakeRequest) -> FakeResponse:
        if request.method != "GET":
            return text_response(405, "Method Not Allowed\n")
        if request.path == "/metrics":
            return text_response(200, render_metrics(cluster, clock(), chosen), _CONTENT_TYPE)
        if request.path == "/health":
            return text_response(200, "OK")
        return text_response(404, "404 page not found\n")

    return handle

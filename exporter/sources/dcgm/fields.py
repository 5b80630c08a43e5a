"""DCGM field semantics: which labels name the device, what a series is, which values are real.

dcgm-exporter's blank sentinels, its utilisation fields (ratio or percent) and power draw are
read here; a corrupt sample (4294967295, NaN, out of range) raises BadRecord with its reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from exporter.sources.checks import MAX_LABEL, NON_FINITE, OUT_OF_RANGE, BadRecord, label

__all__ = [
    "BLANK_FLOOR",
    "BLANK_TEXT",
    "DEVICE_LABELS",
    "GPU_UTIL",
    "GR_ENGINE_ACTIVE",
    "MAX_WATTS",
    "POWER_USAGE",
    "checked",
    "checked_labels",
    "describe",
    "identity_labels",
    "pod_labels",
    "power_watts",
    "utilisation",
]

GR_ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
# Power draw in watts (a gauge, per physical GPU: MIG instances do not report it).
POWER_USAGE = "DCGM_FI_DEV_POWER_USAGE"
MAX_WATTS = 5_000.0  # no accelerator draws more; above it is a corrupt sample

# DCGM's "blank" sentinels (no value) start at 2**47 for doubles and are near 2**63 for
# integers; very old exporters printed them instead of skipping the series.
BLANK_FLOOR = 2.0**47
# DCGM's blank string: a label it could not fill, e.g. the MIG profile of a vanished instance.
BLANK_TEXT = "<<<"

# Labels that describe the device or the exporter; every other label on a series is a
# (sanitised) pod label exported with --kubernetes-enable-pod-labels.
DEVICE_LABELS = frozenset(
    {
        "gpu",
        "UUID",
        "uuid",
        "pci_bus_id",
        "device",
        "modelName",
        "GPU_I_PROFILE",
        "GPU_I_ID",
        "Hostname",
        "hostname",
        "DCGM_FI_DRIVER_VERSION",
        "container",
        "namespace",
        "pod",
        "pod_name",
        "pod_namespace",
        "container_name",
        "pod_uid",
        "vgpu",
        "err_code",
        "err_msg",
        "exported_pod",
        "exported_namespace",
        "exported_container",
        "instance",
        "job",
    }
)


def pod_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The non-empty labels of a series that are not the device's: its pod's labels."""
    return {k: v for k, v in labels.items() if k not in DEVICE_LABELS and v}


def describe(labels: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """A series' identity (node, gpu, model, MIG profile and instance, workload), pod labels."""
    return identity_labels(labels, ""), pod_labels(labels)


def identity_labels(labels: Mapping[str, str], default_node: str) -> dict[str, str]:
    # The first label of each list that is not empty: an empty label is the same as a missing
    # one (Prometheus treats them alike), and exported_* wins because Prometheus renames the
    # workload's labels to it.
    get = labels.get
    return {
        "node": get("Hostname") or get("hostname") or default_node,
        "gpu": labels["gpu"],
        "uuid": get("UUID") or get("uuid") or "",
        "model": get("modelName") or "",
        "mig_profile": get("GPU_I_PROFILE") or "",
        "mig_instance": get("GPU_I_ID") or "",
        "namespace": get("exported_namespace") or get("namespace") or get("pod_namespace") or "",
        "pod": get("exported_pod") or get("pod") or get("pod_name") or "",
        "container": get("exported_container") or get("container") or get("container_name") or "",
    }


def utilisation(values: Mapping[str, float], what: str) -> float | None:
    ratio = _sample(values, GR_ENGINE_ACTIVE, 1.0, what)
    if ratio is not None:
        return ratio
    percent = _sample(values, GPU_UTIL, 100.0, what)
    return None if percent is None else percent / 100.0


def power_watts(values: Mapping[str, float], what: str) -> float | None:
    """The GPU's power draw in watts; None when not reported."""
    return _sample(values, POWER_USAGE, MAX_WATTS, what)


def _sample(values: Mapping[str, float], field: str, high: float, what: str) -> float | None:
    value = values.get(field)
    # The plain case answers without building checked's message (ten thousand GPUs a read);
    # NaN and infinities fail the comparison and go to checked, which says why.
    if value is None or 0.0 <= value <= high:
        return value
    return checked(value, 0.0, high, f"{what}: {field}")


def checked(value: float | None, low: float, high: float, what: str) -> float | None:
    if value is None:
        return None
    if not math.isfinite(value):
        raise BadRecord(NON_FINITE, f"{what} is {value}")
    # 4294967295 (a uint32 -1) is one of DCGM's blank markers below BLANK_FLOOR: refused here,
    # which leaves the GPU's utilisation unknown, not the GPU uncounted.
    if not low <= value <= high:
        raise BadRecord(OUT_OF_RANGE, f"{what} is {value}, expected {low:g}..{high:g}")
    return value


def checked_labels(ident: Mapping[str, str], pod_labels: Mapping[str, str], what: str) -> None:
    """Every name a GPU record carries is one label() accepts; else the record is bad."""
    # A short ASCII string is what label() accepts at once: only another goes to it, so its
    # message is built only when it may be needed.
    for name, value in ident.items():
        if type(value) is not str or len(value) > MAX_LABEL or not value.isascii():
            label(value, f"{what}: {name}")
    for key, value in pod_labels.items():
        if not _plain(key) or not _plain(value):
            label(key, f"{what}: a pod label name")
            label(value, f"{what}: pod label {key[:60]!r}")


def _plain(value: object) -> bool:
    return type(value) is str and len(value) <= MAX_LABEL and value.isascii()

"""DCGM parsing: dcgm-exporter's series into one record per GPU or MIG instance (pure).

A record names the node, the GPU, the pod holding it (if any) and its utilisation; it knows
nothing about teams. The rules are listed in exporter/sources/dcgm/source.py and
docs/sources/dcgm.md.

A corrupt utilisation sample (4294967295, NaN, out of range) is a corrupt sample, not a
corrupt GPU: the GPU stays with its pod, its utilisation unknown (`corrupt` names why), and the
sample is counted as dropped. A GPU record that cannot be read at all is dropped, and fails the
read: it would be missing from every count.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from exporter.errors import RecordsDropped, UpstreamPayloadError
from exporter.sources.checks import (
    MISSING_FIELD,
    NON_FINITE,
    OUT_OF_RANGE,
    WRONG_TYPE,
    BadRecord,
    Tally,
    dedupe,
    label,
    refuse_dropped,
)
from exporter.sources.dcgm import text as dcgm_text
from exporter.sources.dcgm.mig import mig_share, mig_slices

__all__ = [
    "GPU_UTIL",
    "GR_ENGINE_ACTIVE",
    "UNSLICED",
    "DcgmSnapshot",
    "GpuRecord",
    "IdleHours",
    "checked_labels",
    "describe",
    "identity",
    "mig_share",
    "mig_slices",
    "parse_metrics",
    "parse_series",
    "sample_drops",
    "snapshot",
]

SOURCE = "dcgm"
GR_ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
# Power draw in watts (a gauge, per physical GPU: MIG instances do not report it).
POWER_USAGE = "DCGM_FI_DEV_POWER_USAGE"
_MAX_WATTS = 5_000.0  # no accelerator draws more; above it is a corrupt sample

# DCGM's "blank" sentinels (no value) start at 2**47 for doubles and are near 2**63 for
# integers; very old exporters printed them instead of skipping the series.
_BLANK_FLOOR = 2.0**47
# DCGM's blank string: a label it could not fill, e.g. the MIG profile of a vanished instance.
_BLANK_TEXT = "<<<"
UNSLICED = "unsliced"  # the mig_instance of a MIG GPU's slices that no instance holds

# Labels that describe the device or the exporter; every other label on a series is a
# (sanitised) pod label exported with --kubernetes-enable-pod-labels.
_DEVICE_LABELS = frozenset(
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


@dataclass(frozen=True)
class GpuRecord:
    """One GPU or MIG instance as one dcgm-exporter reports it, with the pod that holds it."""

    node: str
    gpu: str
    uuid: str
    model: str
    mig_instance: str = ""
    namespace: str = ""
    pod: str = ""
    container: str = ""
    pod_labels: tuple[tuple[str, str], ...] = ()
    utilisation: float | None = None  # 0..1; None when the exporter reports none
    share: float = 1.0  # fraction of one physical GPU
    # The drop reason of a corrupt utilisation sample ("" when none): utilisation is unknown.
    corrupt: str = ""
    power_watts: float | None = None  # the whole GPU's draw; None when not reported or corrupt
    power_corrupt: str = ""  # the drop reason of a corrupt power sample ("" when none)

    @property
    def allocated(self) -> bool:
        """True when a pod holds the GPU (an absent or empty pod label means unallocated)."""
        return bool(self.pod)

    @property
    def labels(self) -> dict[str, str]:
        """The pod labels as a mapping, for attribution."""
        return dict(self.pod_labels)


@dataclass(frozen=True)
class IdleHours:
    """GPU-hours one pod held a GPU or MIG instance below the idle threshold this month."""

    namespace: str
    pod: str
    model: str
    pod_labels: tuple[tuple[str, str], ...]
    hours: float  # in whole GPUs: a MIG instance's hours weighed by its share

    @property
    def labels(self) -> dict[str, str]:
        """The pod labels as a mapping, for attribution."""
        return dict(self.pod_labels)


@dataclass(frozen=True)
class DcgmSnapshot:
    """Every GPU and MIG instance of one refresh, over all endpoints."""

    gpus: tuple[GpuRecord, ...]
    dropped: Mapping[str, int] = field(default_factory=dict)
    # Discovered endpoints by state (scraped, failed, not_ready); empty for the other modes.
    endpoints: Mapping[str, int] = field(default_factory=dict)
    # Month-to-date idle GPU-hours per pod; None when the mode has no history (urls, discovery).
    idle_hours: tuple[IdleHours, ...] | None = None

    def check_after(self, previous: object | None) -> None:
        """dcgm-exporter reports its whole current state; every endpoint must have answered."""
        del previous


def snapshot(records: list[GpuRecord], tally: Tally) -> DcgmSnapshot:
    """Every GPU read, the same GPU behind two URLs (e.g. a Service and a pod) once.

    Its drops are the records `tally` counted and the corrupt samples of the GPUs kept.
    """
    # The same GPU behind two URLs (e.g. a Service and a pod) counts once.
    gpus = dedupe(SOURCE, records, identity, tally, same=_same_gpu)
    return DcgmSnapshot(tuple(gpus), {**sample_drops(gpus) + tally})


def sample_drops(records: Iterable[GpuRecord]) -> Counter[str]:
    """The corrupt utilisation and power samples of `records`, by reason."""
    records = list(records)
    found = Counter(r.corrupt for r in records if r.corrupt)
    return found + Counter(r.power_corrupt for r in records if r.power_corrupt)


def _same_gpu(a: GpuRecord, b: GpuRecord) -> bool:
    # Two scrapes of one exporter are moments apart, so utilisation may differ; the first wins.
    return _without_samples(a) == _without_samples(b)


def _without_samples(record: GpuRecord) -> GpuRecord:
    return replace(record, utilisation=None, corrupt="", power_watts=None, power_corrupt="")


def _with_unsliced(records: list[GpuRecord], tally: Tally) -> list[GpuRecord]:
    """Add, per GPU in MIG mode, an unallocated record for the compute slices no instance holds.

    Without it a GPU carved into 3g + 3g would count 6/7 and its states would not add up to the
    GPUs there are. The rest is counted in whole slices, so the shares add up to exactly one.
    """
    instances: dict[tuple[str, str], dict[str, GpuRecord]] = {}
    for r in records:
        if r.mig_instance:
            instances.setdefault((r.node, r.gpu), {}).setdefault(r.mig_instance, r)
    overfull: set[tuple[str, str]] = set()
    rests: list[GpuRecord] = []
    for (node, gpu), by_id in sorted(instances.items()):
        first = by_id[min(by_id)]
        slices = mig_slices(first.model)
        # Shares are still n / slices here (time-sliced pods are split later): back to slices.
        used = sum(round(r.share * slices) for r in by_id.values())
        if used > slices:
            overfull.add((node, gpu))
            what = f"GPU {gpu} on {node!r}"
            tally.drop(
                BadRecord(OUT_OF_RANGE, f"{what}: MIG instances hold {used}/{slices} slices")
            )
        elif used < slices:
            rest = GpuRecord(node, gpu, first.uuid, first.model, UNSLICED)
            rests.append(replace(rest, share=(slices - used) / slices))
    return [r for r in records if (r.node, r.gpu) not in overfull] + rests


@dataclass
class _Entity:
    """What the series of one (GPU or instance, pod) say, gathered before validation."""

    labels: dict[str, str]
    values: dict[str, float] = field(default_factory=dict)
    pod_labels: dict[str, str] = field(default_factory=dict)


def parse_metrics(
    text: str, *, default_node: str = "", where: str = "", tally: Tally | None = None
) -> list[GpuRecord]:
    """Parse one endpoint's exposition into records; a bad payload raises UpstreamPayloadError.

    Args:
        text: the body of dcgm-exporter's /metrics.
        default_node: the node to use when the exporter runs with --no-hostname.
        where: the endpoint, named in error messages.
        tally: where dropped GPUs are counted (one dropped GPU fails the read).
    """
    try:
        samples = dcgm_text.read_samples(text)
    except ValueError as exc:
        raise UpstreamPayloadError(f"{SOURCE}: {where}: not Prometheus text ({exc})") from None
    return parse_series(samples, default_node=default_node, where=where, tally=tally)


def parse_series(
    samples: Iterable[tuple[str, Mapping[str, str], float]],
    *,
    default_node: str = "",
    where: str = "",
    tally: Tally | None = None,
) -> list[GpuRecord]:
    """Records from (metric name, labels, value) triples, however they were read."""
    tally = Tally() if tally is None else tally
    entities: dict[tuple[str, ...], _Entity] = {}
    seen: _Seen = {}
    for name, labels, value in samples:
        _collect(entities, seen, name, labels, value, default_node)
    if not entities:
        raise UpstreamPayloadError(f"{SOURCE}: {where}: no DCGM_FI_* series with a gpu label")
    records: list[GpuRecord] = []
    local = Tally()
    for entity in entities.values():
        try:
            records.append(_record(entity))
        except BadRecord as exc:
            local.drop(exc)
    records = _with_unsliced(_drop_mig_parents(records), local)
    # A GPU left out would be missing from every count: the read fails, its drops counted.
    refuse_dropped(f"{SOURCE}: {where}", local, "GPUs")
    corrupt = Counter(r.corrupt for r in records if r.corrupt)
    if corrupt and all(r.utilisation is None for r in records):
        # Not one usable sample: an exporter this broken says nothing about any GPU's use.
        message = f"{SOURCE}: {where}: every utilisation sample was corrupt ({dict(corrupt)})"
        raise RecordsDropped(message, corrupt)
    tally.add(local)
    return _apportion(records)


# Labels objects already collected, by id, each kept alive beside its entity so no id is reused.
_Seen = dict[int, tuple[Mapping[str, str], _Entity]]


def _collect(
    entities: dict[tuple[str, ...], _Entity],
    seen: _Seen,
    name: str,
    labels: Mapping[str, str],
    value: float,
    default_node: str,
) -> None:
    metric = name.upper()
    if not metric.startswith("DCGM_FI_") or "gpu" not in labels:
        return
    # dcgm_text gives every family of a GPU the same labels object: its entity is found once.
    hit = seen.get(id(labels))
    if hit is not None and hit[0] is labels:
        entity = hit[1]
    else:
        entity = _entity(entities, labels, default_node)
        seen[id(labels)] = (labels, entity)
    if not value >= _BLANK_FLOOR:  # NaN is kept, to be refused by validation
        entity.values.setdefault(metric, float(value))


def _entity(
    entities: dict[tuple[str, ...], _Entity], labels: Mapping[str, str], default_node: str
) -> _Entity:
    ident = _identity_labels(labels, default_node)
    entity = entities.setdefault(tuple(ident.values()), _Entity(ident))
    for name, label_value in labels.items():
        if name not in _DEVICE_LABELS and label_value:
            entity.pod_labels.setdefault(name, label_value)
    return entity


def _first(labels: Mapping[str, str], *names: str) -> str:
    # An empty label is the same as a missing one (Prometheus treats them alike), and
    # exported_* wins because Prometheus renames the workload's labels to it.
    for name in names:
        if labels.get(name):
            return labels[name]
    return ""


def describe(labels: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """A series' identity (node, gpu, model, MIG profile and instance, workload), pod labels."""
    pod_labels = {k: v for k, v in labels.items() if k not in _DEVICE_LABELS and v}
    return _identity_labels(labels, ""), pod_labels


def _identity_labels(labels: Mapping[str, str], default_node: str) -> dict[str, str]:
    return {
        "node": _first(labels, "Hostname", "hostname") or default_node,
        "gpu": labels["gpu"],
        "uuid": _first(labels, "UUID", "uuid"),
        "model": _first(labels, "modelName"),
        "mig_profile": _first(labels, "GPU_I_PROFILE"),
        "mig_instance": _first(labels, "GPU_I_ID"),
        "namespace": _first(labels, "exported_namespace", "namespace", "pod_namespace"),
        "pod": _first(labels, "exported_pod", "pod", "pod_name"),
        "container": _first(labels, "exported_container", "container", "container_name"),
    }


def _record(entity: _Entity) -> GpuRecord:
    # The profile is part of the series' identity but, once turned into a share, not kept.
    ident = dict(entity.labels)
    what = f"GPU {ident['gpu'][:60]!r} on {ident['node'][:60]!r}"
    checked_labels(ident, entity.pod_labels, what)
    profile = ident.pop("mig_profile")
    share = 1.0
    if profile:
        if profile.startswith(_BLANK_TEXT):
            raise BadRecord(MISSING_FIELD, f"{what}: MIG profile is DCGM's blank {profile!r}")
        try:
            share = mig_share(profile, ident["model"])
        except ValueError as exc:
            raise BadRecord(WRONG_TYPE, f"{what}: {exc}") from None
    try:
        utilisation, corrupt = _utilisation(entity.values, what), ""
    except BadRecord as exc:
        utilisation, corrupt = None, exc.reason
    try:
        watts = _checked(entity.values.get(POWER_USAGE), 0.0, _MAX_WATTS, f"{what}: {POWER_USAGE}")
        power_corrupt = ""
    except BadRecord as exc:
        watts, power_corrupt = None, exc.reason
    return GpuRecord(
        **ident,
        pod_labels=tuple(sorted(entity.pod_labels.items())),
        utilisation=utilisation,
        share=share,
        corrupt=corrupt,
        power_watts=watts,
        power_corrupt=power_corrupt,
    )


def _utilisation(values: Mapping[str, float], what: str) -> float | None:
    ratio = _checked(values.get(GR_ENGINE_ACTIVE), 0.0, 1.0, f"{what}: {GR_ENGINE_ACTIVE}")
    if ratio is not None:
        return ratio
    percent = _checked(values.get(GPU_UTIL), 0.0, 100.0, f"{what}: {GPU_UTIL}")
    return None if percent is None else percent / 100.0


def _checked(value: float | None, low: float, high: float, what: str) -> float | None:
    if value is None:
        return None
    if not math.isfinite(value):
        raise BadRecord(NON_FINITE, f"{what} is {value}")
    # 4294967295 (a uint32 -1) is one of DCGM's blank markers below _BLANK_FLOOR: refused here,
    # which leaves the GPU's utilisation unknown, not the GPU uncounted.
    if not low <= value <= high:
        raise BadRecord(OUT_OF_RANGE, f"{what} is {value}, expected {low:g}..{high:g}")
    return value


def checked_labels(ident: Mapping[str, str], pod_labels: Mapping[str, str], what: str) -> None:
    """Every name a GPU record carries is one label() accepts; else the record is bad."""
    for name, value in ident.items():
        label(value, f"{what}: {name}")
    for key, value in pod_labels.items():
        label(key, f"{what}: a pod label name")
        label(value, f"{what}: pod label {key[:60]!r}")


def _drop_mig_parents(records: Iterable[GpuRecord]) -> list[GpuRecord]:
    records = list(records)
    # A GPU in MIG mode is counted through its instances; a device-level series of the same
    # GPU would count its capacity twice.
    mig_gpus = {(r.node, r.gpu) for r in records if r.mig_instance}
    return [r for r in records if r.mig_instance or (r.node, r.gpu) not in mig_gpus]


def _apportion(records: list[GpuRecord]) -> list[GpuRecord]:
    holders: dict[tuple[str, str, str], int] = {}
    for r in records:
        if r.allocated:
            slot = (r.node, r.gpu, r.mig_instance)
            holders[slot] = holders.get(slot, 0) + 1
    out = []
    for r in records:
        pods = holders.get((r.node, r.gpu, r.mig_instance), 0)
        if not r.allocated and pods:
            continue  # an unallocated series beside an allocated one describes the same slot
        out.append(replace(r, share=r.share / pods) if pods > 1 else r)
    return sorted(out, key=identity)


def identity(record: GpuRecord) -> tuple[str, ...]:
    """What tells one GPU or MIG instance, held by one pod, from every other."""
    return (
        record.node,
        record.gpu,
        record.mig_instance,
        record.uuid,
        record.namespace,
        record.pod,
        record.container,
    )

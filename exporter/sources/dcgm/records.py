"""DCGM records: one GPU or MIG instance held by one pod, and the snapshot of one refresh.

A record names the node, the GPU, the pod holding it (if any) and its utilisation; it knows
nothing about teams.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from exporter.sources.checks import Tally, dedupe

__all__ = [
    "SOURCE",
    "UNSLICED",
    "DcgmSnapshot",
    "GpuRecord",
    "IdleHours",
    "identity",
    "sample_drops",
    "snapshot",
]

SOURCE = "dcgm"
UNSLICED = "unsliced"  # the mig_instance of a MIG GPU's slices that no instance holds


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

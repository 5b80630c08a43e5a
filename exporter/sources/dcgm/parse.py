"""DCGM parsing: dcgm-exporter's series into one record per GPU or MIG instance (pure).

The series of one GPU (or instance, and pod) are gathered, validated as exporter/sources/dcgm/
fields.py reads them, and turned into records; MIG parents are dropped, the slices no instance
holds added, and time-sliced GPUs shared among their pods. The rules are listed in
exporter/sources/dcgm/source.py and docs/sources/dcgm.md.

A corrupt utilisation sample is a corrupt sample, not a corrupt GPU: the GPU stays with its
pod, its utilisation unknown (`corrupt` names why), and the sample is counted as dropped, even
when every sample of the endpoint is corrupt (whether a whole fleet of them fails the read is
the source's judgement). A GPU record that cannot be read at all is dropped, and fails the
read: it would be missing from every count.

A body is complete only when every GPU it announces has the fields the others have (a body cut
at a line boundary still parses, but its last family covers only some GPUs) and every field it
announces with a TYPE line has samples; else the read fails (UpstreamIncomplete). Its shape,
the (GPU, field) pairs it holds, is handed to the source to compare with the endpoint's last
good read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from exporter.errors import UpstreamIncomplete, UpstreamPayloadError
from exporter.sources.checks import (
    MISSING_FIELD,
    OUT_OF_RANGE,
    WRONG_TYPE,
    BadRecord,
    Tally,
    refuse_dropped,
)
from exporter.sources.dcgm import text as dcgm_text
from exporter.sources.dcgm.fields import (
    BLANK_FLOOR,
    BLANK_TEXT,
    GPU_UTIL,
    GR_ENGINE_ACTIVE,
    POWER_USAGE,
    checked_labels,
    identity_labels,
    pod_labels,
    power_watts,
    utilisation,
)
from exporter.sources.dcgm.mig import mig_share, mig_slices
from exporter.sources.dcgm.records import SOURCE, UNSLICED, GpuRecord, identity

__all__ = ["FIELDS", "Shape", "check_complete", "parse_metrics", "parse_series"]

# The fields a record is made of: a GPU that lacks one the others report was cut off.
FIELDS = (GR_ENGINE_ACTIVE, GPU_UTIL, POWER_USAGE)
_FIELD_SET = frozenset(FIELDS)
# (node, gpu, MIG instance, field) for every field a GPU of a body reports, value or blank.
Shape = set[tuple[str, str, str, str]]


@dataclass
class _Entity:
    """What the series of one (GPU or instance, pod) say, gathered before validation."""

    labels: dict[str, str]
    values: dict[str, float] = field(default_factory=dict)
    blank: set[str] = field(default_factory=set)  # fields printed as DCGM's blank sentinel
    pod_labels: dict[str, str] = field(default_factory=dict)


def parse_metrics(
    text: str,
    *,
    default_node: str = "",
    where: str = "",
    tally: Tally | None = None,
    shape: Shape | None = None,
) -> list[GpuRecord]:
    """Parse one endpoint's exposition into records; a bad payload raises UpstreamPayloadError.

    Args:
        text: the body of dcgm-exporter's /metrics.
        default_node: the node to use when the exporter runs with --no-hostname.
        where: the endpoint, named in error messages.
        tally: where dropped GPUs are counted (one dropped GPU fails the read).
        shape: filled with the body's (GPU, field) pairs, for the endpoint's next read.
    """
    try:
        samples = dcgm_text.read_samples(text)
    except ValueError as exc:
        raise UpstreamPayloadError(f"{SOURCE}: {where}: not Prometheus text ({exc})") from None
    found: Shape = set()
    records = parse_series(
        samples, default_node=default_node, where=where, tally=tally, shape=found
    )
    check_complete(text, found, where)
    if shape is not None:
        shape.update(found)
    return records


def parse_series(
    samples: Iterable[tuple[str, Mapping[str, str], float]],
    *,
    default_node: str = "",
    where: str = "",
    tally: Tally | None = None,
    shape: Shape | None = None,
) -> list[GpuRecord]:
    """Snapshots from (metric name, labels, value) triples, however they were read."""
    tally = Tally() if tally is None else tally
    entities = _collect(samples, default_node)
    if not entities:
        raise UpstreamPayloadError(f"{SOURCE}: {where}: no DCGM_FI_* series with a gpu label")
    if shape is not None:
        shape.update(_shape(entities.values()))
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
    tally.add(local)
    return _apportion(records)


def _shape(entities: Iterable[_Entity]) -> Shape:
    found: Shape = set()
    for entity in entities:
        node, gpu, instance = (entity.labels[k] for k in ("node", "gpu", "mig_instance"))
        reported = (entity.values.keys() | entity.blank) & _FIELD_SET
        found.update((node, gpu, instance, name) for name in reported)
    return found


def check_complete(text: str, shape: Shape, where: str) -> None:
    """A body whose GPUs' fields say it was cut short raises UpstreamIncomplete."""
    _announced_have_samples(text, shape, where)
    _every_gpu_has_its_fields(shape, where)


def _announced_have_samples(text: str, shape: Shape, where: str) -> None:
    """A field announced by its HELP or TYPE line has samples: else the body was cut after it.

    (A TYPE other than gauge renames the samples, as the library reads them: not announced.)
    """
    have = {name for *_, name in shape}
    for name in (n for n in FIELDS if n not in have):
        typed = re.search(rf"^# TYPE {name} (\S+)", text, re.MULTILINE)
        if typed[1] == "gauge" if typed else f"# HELP {name} " in text:
            raise UpstreamIncomplete(
                f"{SOURCE}: {where}: {name} is announced without one sample: the body was cut"
            )


def _every_gpu_has_its_fields(shape: Shape, where: str) -> None:
    """Every GPU (and every MIG instance) reports the fields the others of its kind report.

    dcgm-exporter writes family by family, so a body cut at a line boundary leaves the last
    family on the first GPUs only; read, it would serve the GPUs after the cut without it. A
    GPU in MIG mode is judged by its instances (its device-level series may lack fields).
    """
    fields: dict[tuple[str, str, str], set[str]] = {}
    for node, gpu, instance, name in shape:
        fields.setdefault((node, gpu, instance), set()).add(name)
    in_mig = {(node, gpu) for node, gpu, instance in fields if instance}
    for kind_is_mig in (False, True):
        group = {
            slot: names
            for slot, names in fields.items()
            if bool(slot[2]) == kind_is_mig and (kind_is_mig or slot[:2] not in in_mig)
        }
        union = set().union(*group.values()) if group else set()
        for (node, gpu, instance), names in sorted(group.items()):
            if names != union:
                missing = ", ".join(sorted(union - names))
                what = f"GPU {gpu[:60]!r}{f' instance {instance[:20]!r}' if instance else ''}"
                raise UpstreamIncomplete(
                    f"{SOURCE}: {where}: {what} on {node[:60]!r} lacks {missing}, which other "
                    "GPUs of the body report: the body was cut"
                )


# Labels objects already collected, by id, each kept alive beside its entity so no id is reused.
_Seen = dict[int, tuple[Mapping[str, str], _Entity]]


def _collect(
    samples: Iterable[tuple[str, Mapping[str, str], float]], default_node: str
) -> dict[tuple[str, ...], _Entity]:
    """The samples of each (GPU or instance, pod), in one pass (a call per sample was a fifth
    of the read)."""
    entities: dict[tuple[str, ...], _Entity] = {}
    seen: _Seen = {}
    upper: dict[str, str] = {}
    for name, labels, value in samples:
        metric = upper.get(name)
        if metric is None:
            metric = upper[name] = name.upper()
        if not metric.startswith("DCGM_FI_") or "gpu" not in labels:
            continue
        # dcgm_text gives every family of a GPU the same labels object: its entity is found once.
        hit = seen.get(id(labels))
        if hit is not None and hit[0] is labels:
            entity = hit[1]
        else:
            entity = _entity(entities, labels, default_node)
            seen[id(labels)] = (labels, entity)
        if not value >= BLANK_FLOOR:  # NaN is kept, to be refused by validation
            entity.values.setdefault(metric, float(value))
        else:
            entity.blank.add(metric)
    return entities


def _entity(
    entities: dict[tuple[str, ...], _Entity], labels: Mapping[str, str], default_node: str
) -> _Entity:
    ident = identity_labels(labels, default_node)
    entity = entities.setdefault(tuple(ident.values()), _Entity(ident))
    for name, label_value in pod_labels(labels).items():
        entity.pod_labels.setdefault(name, label_value)
    return entity


def _record(entity: _Entity) -> GpuRecord:
    # The profile is part of the series' identity but, once turned into a share, not kept.
    ident = dict(entity.labels)
    what = f"GPU {ident['gpu'][:60]!r} on {ident['node'][:60]!r}"
    checked_labels(ident, entity.pod_labels, what)
    profile = ident.pop("mig_profile")
    share = 1.0
    if profile:
        if profile.startswith(BLANK_TEXT):
            raise BadRecord(MISSING_FIELD, f"{what}: MIG profile is DCGM's blank {profile!r}")
        try:
            share = mig_share(profile, ident["model"])
        except ValueError as exc:
            raise BadRecord(WRONG_TYPE, f"{what}: {exc}") from None
    try:
        ratio, corrupt = utilisation(entity.values, what), ""
    except BadRecord as exc:
        ratio, corrupt = None, exc.reason
    try:
        watts, power_corrupt = power_watts(entity.values, what), ""
    except BadRecord as exc:
        watts, power_corrupt = None, exc.reason
    if watts is None and not power_corrupt and POWER_USAGE in entity.blank:
        # Printed blank (old builds): the GPU draws power, how much is unknown, never none.
        power_corrupt = MISSING_FIELD
    return GpuRecord(
        **ident,
        pod_labels=tuple(sorted(entity.pod_labels.items())),
        utilisation=ratio,
        share=share,
        corrupt=corrupt,
        power_watts=watts,
        power_corrupt=power_corrupt,
    )


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

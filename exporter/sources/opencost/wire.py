"""OpenCost `/allocation` bodies decoded from bytes into typed, validated records at C speed.

The envelope and each set are split into raw records without decoding them; each record is
then decoded into a `msgspec` struct whose types and static bounds are checked while it is
decoded, added to the running sums, and dropped. A record that breaks them is dropped and
counted with the reason its fields give (reasons.py); the rest are kept. A bad envelope fails
the read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Annotated, Any

import msgspec

from exporter.errors import UpstreamPayloadError
from exporter.sources.checks import (
    MAX_COST,
    MAX_GPUS,
    MAX_LABEL,
    OUT_OF_RANGE,
    BadRecord,
    Tally,
)
from exporter.sources.collector import collector_paused
from exporter.sources.opencost.reasons import (
    IDLE_FIELDS,
    IDLE_KEY,
    MAX_USAGE,
    RESOLUTION,
    YEAR_HOURS,
    reason,
)
from exporter.sources.opencost.records import (
    COMPONENT_FIELDS,
    EMPTY,
    EMPTY_USAGE,
    Allocation,
    Totals,
    component_costs,
    merge_into,
    usage_map,
)

__all__ = [
    "COMPONENT_FIELDS",
    "IDLE_FIELDS",
    "IDLE_KEY",
    "RESOLUTION",
    "Allocation",
    "Totals",
    "decode_into",
    "decode_sets",
    "merge_into",
]

SOURCE = "opencost"

# A cost is hours x a price: never negative. An *Adjustment is what a reconciliation with the
# cloud bill moved afterwards, a credit when the bill came in lower, so it may be negative; and
# OpenCost before 1.118 wrote negative idle when allocations overran the assets (see
# docs/sources/opencost.md). Nothing beyond MAX_COST either way; the bounds reject +-Inf too.
# A JSON null (OpenCost's NaN) or a missing field is 0.
_Cost = Annotated[float, msgspec.Meta(ge=0.0, lt=MAX_COST)] | None
_Signed = Annotated[float, msgspec.Meta(ge=-MAX_COST, lt=MAX_COST)] | None
_Hours = Annotated[float, msgspec.Meta(ge=0.0, lt=MAX_GPUS * YEAR_HOURS)] | None
_Gpus = Annotated[float, msgspec.Meta(ge=0.0, lt=MAX_GPUS)] | None
_Minutes = Annotated[float, msgspec.Meta(ge=0.0, le=YEAR_HOURS * 60)] | None
# Core-hours, byte-hours and bytes: never negative; the bound only refuses +Inf and overflow.
_Usage = Annotated[float, msgspec.Meta(ge=0.0, lt=MAX_USAGE)] | None


# Names that may become label values (a namespace, a team from a label), bounded while decoding;
# msgspec refuses a lone surrogate in the whole body, so only the length is left to check.
_Label = Annotated[str, msgspec.Meta(max_length=MAX_LABEL)]


class _Properties(msgspec.Struct, gc=False):
    namespace: _Label = ""
    node: _Label = ""
    labels: dict[_Label, _Label] | None = None
    namespaceLabels: dict[_Label, _Label] | None = None
    # Unbounded while decoding: an annotation too long to be a label value is metadata to drop
    # (_short_only), never a reason to drop the allocation's cost.
    annotations: dict[str, str] | None = None
    namespaceAnnotations: dict[str, str] | None = None


class _Window(msgspec.Struct, gc=False):
    start: str | None = None


class _Record(msgspec.Struct, gc=False):
    """The fields of an allocation the exporter reads; every other field is skipped unread."""

    properties: _Properties | None = None
    window: _Window | None = None  # the set's step window: which day a set of days is
    gpuHours: _Hours = None
    # An older or trimmed record without gpuHours still says its GPUs and its minutes.
    gpuCount: _Gpus = None
    minutes: _Minutes = None
    # Metadata only, decoded untyped: a bad one is an unknown model, never a bad allocation.
    gpuAllocation: Any = None
    gpuCost: _Cost = None
    gpuCostAdjustment: _Signed = None
    cpuCost: _Cost = None
    cpuCostAdjustment: _Signed = None
    ramCost: _Cost = None
    ramCostAdjustment: _Signed = None
    pvCost: _Cost = None
    pvCostAdjustment: _Signed = None
    networkCost: _Cost = None
    networkCostAdjustment: _Signed = None
    loadBalancerCost: _Cost = None
    loadBalancerCostAdjustment: _Signed = None
    sharedCost: _Cost = None
    externalCost: _Cost = None
    # What was consumed (USAGE_FIELDS): read for the FOCUS export's quantities.
    cpuCoreHours: _Usage = None
    ramByteHours: _Usage = None
    pvByteHours: _Usage = None
    networkTransferBytes: _Usage = None


class _Idle(msgspec.Struct, gc=False):
    """The `__idle__` entry: only its three costs, which older OpenCost wrote negative."""

    gpuCost: _Signed = None
    cpuCost: _Signed = None
    ramCost: _Signed = None


class _Envelope(msgspec.Struct):
    # Before mid-2025 the envelope also carried "status"; both forms put the payload in "data".
    # Each set stays raw (a view of the body) and is decoded on its own: only one set's
    # records are ever held as structs at a time.
    data: list[msgspec.Raw] | None
    code: Any = 200
    message: Any = ""


class _RawEnvelope(msgspec.Struct):
    data: msgspec.Raw
    code: Any = 200
    message: Any = ""


_STRICT = msgspec.json.Decoder(_Envelope)
_LOOSE = msgspec.json.Decoder(_RawEnvelope)
_LOOSE_SET = msgspec.json.Decoder(dict[str, msgspec.Raw] | None)
_RECORD = msgspec.json.Decoder(_Record)
_IDLE = msgspec.json.Decoder(_Idle)
_ANY = msgspec.json.Decoder()


def decode_into(
    content: bytes | bytearray, hours: float | None, tally: Tally, totals: Totals
) -> int:
    """Add every set of an `/allocation` body to `totals`, oldest first; the records kept.

    Bad records are dropped into `tally`; `hours` (the length of one set) bounds GPU-hours.
    msgspec.DecodeError (not JSON) and UpstreamPayloadError (a bad envelope) are the
    caller's to report.
    """
    high = MAX_GPUS * (YEAR_HOURS if hours is None else hours)
    envelope = _envelope(content)
    with collector_paused():
        return sum(_day(_records(step), high, tally, totals) for step in envelope.data or ())


def decode_sets(
    content: bytes | bytearray, hours: float, tally: Tally
) -> list[tuple[str | None, Totals, int]]:
    """Every set of an `/allocation` body on its own: its window start (as written), its
    records and how many were kept. OpenCost leaves empty sets out, so a set is placed by
    the window its records name, not by its position."""
    high = MAX_GPUS * hours
    out = []
    with collector_paused():
        for step in _envelope(content).data or ():
            totals, starts = Totals(), _Starts()
            kept = _day(starts.noted(_records(step)), high, tally, totals)
            out.append((starts.first, totals, kept))
    return out


class _Starts:
    """The first window start a set's records write, noted as they pass one at a time (a
    set's records are never all held as structs at once)."""

    def __init__(self) -> None:
        self.first: str | None = None

    def noted(
        self, records: Iterable[tuple[str, _Record | _Idle | BadRecord]]
    ) -> Iterator[tuple[str, _Record | _Idle | BadRecord]]:
        for name, record in records:
            if self.first is None and isinstance(record, _Record) and record.window is not None:
                self.first = record.window.start
            yield name, record


def _envelope(content: bytes | bytearray) -> _Envelope:
    try:
        envelope = _STRICT.decode(content)
    except msgspec.ValidationError:
        pass
    else:
        _check_code(envelope.code, envelope.message)
        return envelope
    try:
        loose = _LOOSE.decode(content)
    except msgspec.ValidationError:
        raise UpstreamPayloadError(
            f"{SOURCE}: /allocation: expected an object with a data field"
        ) from None
    _check_code(loose.code, loose.message)
    raise UpstreamPayloadError(f"{SOURCE}: /allocation data: expected a list of sets")


def _records(step: msgspec.Raw) -> Iterable[tuple[str, _Record | _Idle | BadRecord]]:
    """One set's records, each typed at C speed as it is reached and dropped once added.

    Record by record rather than the whole set at once: a set of 50,000 decoded records with
    their label maps is over a hundred megabytes that would be alive together beside the body.
    """
    try:
        raws = _LOOSE_SET.decode(step)
    except msgspec.ValidationError:
        raise UpstreamPayloadError(f"{SOURCE}: /allocation set: expected an object") from None
    return () if raws is None else ((name, _one(name, raw)) for name, raw in raws.items())


def _one(name: str, raw: msgspec.Raw) -> _Record | _Idle | BadRecord:
    try:
        return _IDLE.decode(raw) if name == IDLE_KEY else _RECORD.decode(raw)
    except msgspec.ValidationError:
        return reason(name, _ANY.decode(raw))


def _check_code(code: Any, message: Any) -> None:
    if code != 200:
        raise UpstreamPayloadError(f"{SOURCE}: /allocation: code {code}: {message}")


def _day(
    records: Iterable[tuple[str, _Record | _Idle | BadRecord]],
    high: float,
    tally: Tally,
    totals: Totals,
) -> int:
    idle: dict[str, float] = {}
    kept = 0
    for name, record in records:
        try:
            if isinstance(record, BadRecord):
                raise record
            if name == IDLE_KEY:
                for resource, amount in _idle(record).items():
                    idle[resource] = idle.get(resource, 0.0) + amount
                continue
            if isinstance(record, _Idle):  # pragma: no cover - only ever decoded for IDLE_KEY
                raise TypeError(name)
            _add(totals, name, record, high)
        except BadRecord as exc:
            tally.drop(exc)
            continue
        kept += 1
    if idle:
        totals.add_idle(idle)
    return kept + len(idle)


def _idle(r: _Record | _Idle) -> dict[str, float]:
    values = (r.gpuCost or 0.0, r.cpuCost or 0.0, r.ramCost or 0.0)
    _resolution(IDLE_KEY, values)
    return dict(zip(IDLE_FIELDS, values, strict=True))


def _add(totals: Totals, name: str, r: _Record, high: float) -> None:
    # Runs once per record: helpers inlined, and each step does only what the record needs.
    gpu_hours = r.gpuHours
    if gpu_hours is None:
        # An older or trimmed record: gpuCount is gpuHours over the hours, minutes the hours.
        count, minutes = r.gpuCount, r.minutes
        gpu_hours = count * minutes / 60.0 if count is not None and minutes is not None else 0.0
    if gpu_hours >= high:
        raise BadRecord(OUT_OF_RANGE, f"allocation {name!r}: gpuHours is {gpu_hours:g}")
    fields = (
        r.gpuCost or 0.0,
        r.gpuCostAdjustment or 0.0,
        r.cpuCost or 0.0,
        r.cpuCostAdjustment or 0.0,
        r.ramCost or 0.0,
        r.ramCostAdjustment or 0.0,
        r.pvCost or 0.0,
        r.pvCostAdjustment or 0.0,
        r.networkCost or 0.0,
        r.networkCostAdjustment or 0.0,
        r.loadBalancerCost or 0.0,
        r.loadBalancerCostAdjustment or 0.0,
        r.sharedCost or 0.0,
        r.externalCost or 0.0,
        gpu_hours,
    )
    # The smallest non-zero magnitude, zeros (most fields) left out before abs is called.
    if min(map(abs, filter(None, fields)), default=RESOLUTION) < RESOLUTION:
        _resolution(name, fields)
    g, ga, c, ca, m, ma, s, sa, n, na, lb, lba, sh, ex, _ = fields
    costs = (g + ga, c + ca, m + ma, s + sa, n + na, lb + lba + sh + ex)
    gpu = r.gpuAllocation
    model = "" if gpu is None else _gpu_model(gpu)  # null on every pod without a GPU
    usage = _usage(r)
    if totals.add(name, costs, gpu_hours, model, usage):
        return
    props = r.properties or _Properties()
    shared = totals.shared
    ns_labels = props.namespaceLabels or EMPTY
    ns_annotations = _short_only(props.namespaceAnnotations)
    totals.put(
        Allocation(
            name,
            shared.setdefault(props.namespace, props.namespace),
            shared.setdefault(props.node, props.node),
            _interned(shared, props.labels),
            shared.setdefault(tuple(ns_labels.items()), ns_labels),
            component_costs(*costs),
            gpu_hours,
            model,
            usage,
            _short_only(props.annotations),
            shared.setdefault(("a", *ns_annotations.items()), ns_annotations),
        )
    )


def _interned(shared: dict[Any, Any], labels: dict[str, str] | None) -> Mapping[str, str]:
    # A workload's labels repeat a few values (a team's name, an app) across every allocation
    # and decoding makes a string of each per record: one copy of each, kept in the decoded
    # map itself (its keys are already shared: msgspec keeps one string per key it decodes).
    if not labels:
        return EMPTY
    for key, value in labels.items():
        labels[key] = shared.setdefault(value, value)
    return labels


def _short_only(annotations: dict[str, str] | None) -> Mapping[str, str]:
    if not annotations:
        return EMPTY
    return {k: v for k, v in annotations.items() if len(k) <= MAX_LABEL and len(v) <= MAX_LABEL}


def _usage(r: _Record) -> Mapping[str, float]:
    # Only what was consumed: most allocations leave network and volumes at 0.
    cpu, ram, pv, net = r.cpuCoreHours, r.ramByteHours, r.pvByteHours, r.networkTransferBytes
    if not (cpu or ram or pv or net):
        return EMPTY_USAGE
    return usage_map(cpu, ram, pv, net)


def _gpu_model(gpu: Any) -> str:
    model = gpu.get("gpuModel") if isinstance(gpu, dict) else None
    # Metadata: a model name that is not one is an unknown model, not a bad allocation.
    return model if isinstance(model, str) and len(model) <= MAX_LABEL else ""


def _resolution(name: str, values: tuple[float, ...]) -> None:
    # Builtins only (the smallest non-zero magnitude): this runs for every record.
    smallest = min(filter(None, map(abs, values)), default=RESOLUTION)
    if smallest < RESOLUTION:
        raise BadRecord(OUT_OF_RANGE, f"allocation {name!r}: {smallest:g} is below the resolution")

"""OpenCost `/allocation` bodies decoded from bytes into typed, validated records at C speed.

The whole body is first decoded into `msgspec` structs whose types and static bounds are
checked while decoding. If any record breaks them, the body is decoded again with each
record left raw, and every record is then decoded on its own: a bad one is dropped and
counted by the same rules as always, and the rest are kept. A bad envelope fails the read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

from exporter.errors import UpstreamPayloadError
from exporter.sources.checks import (
    MAX_COST,
    MAX_GPUS,
    OUT_OF_RANGE,
    WRONG_TYPE,
    BadRecord,
    Tally,
    number,
)

__all__ = ["IDLE_KEY", "Allocation", "DaySet", "decode_sets", "merge_into"]

SOURCE = "opencost"
IDLE_KEY = "__idle__"
# When the window is not known, bound GPU-hours by what MAX_GPUS could run in a leap year.
YEAR_HOURS = 366 * 24.0
# OpenCost rounds its numbers to 5 decimals (assets and older builds print 6), so a non-zero
# cost or GPU-hour figure below 1e-9 is not something it writes. Refusing those keeps the
# maths clear of denormals: a split of idle (cost x weight / total) cannot underflow to 0 and
# lose money, and the GPU-hour price (GPU cost / GPU-hours) cannot overflow.
RESOLUTION = 1e-9

# Component -> the OpenCost fields that add up to it (cost plus its adjustment).
COMPONENT_FIELDS: dict[str, tuple[str, ...]] = {
    "gpu": ("gpuCost", "gpuCostAdjustment"),
    "cpu": ("cpuCost", "cpuCostAdjustment"),
    "ram": ("ramCost", "ramCostAdjustment"),
    "storage": ("pvCost", "pvCostAdjustment"),
    "network": ("networkCost", "networkCostAdjustment"),
    "other": (
        "loadBalancerCost",
        "loadBalancerCostAdjustment",
        "sharedCost",
        "externalCost",
    ),
}
IDLE_FIELDS: dict[str, str] = {"gpu": "gpuCost", "cpu": "cpuCost", "ram": "ramCost"}

# Costs may be negative (adjustments such as credits), never beyond MAX_COST either way; the
# bounds reject +-Inf too. A JSON null (OpenCost's NaN) or a missing field is 0.
_Cost = Annotated[float, msgspec.Meta(ge=-MAX_COST, lt=MAX_COST)] | None
_Hours = Annotated[float, msgspec.Meta(ge=0.0, lt=MAX_GPUS * YEAR_HOURS)] | None


class Allocation(msgspec.Struct, frozen=True, gc=False):
    """One OpenCost allocation (a controller's pods on a node) and what it cost in the window.

    A frozen struct rather than a frozen dataclass: one is built per record, and a struct is
    built in C where a frozen dataclass sets each field through object.__setattr__.
    """

    name: str  # OpenCost's key, node/namespace/controller: the sets of a window merge by it
    namespace: str
    node: str
    labels: Mapping[str, str]
    namespace_labels: Mapping[str, str]
    costs: Mapping[str, float]
    gpu_hours: float
    # gpuAllocation.gpuModel (DCGM's modelName, as OpenCost saw it); "" when absent or mixed.
    gpu_model: str = ""


@dataclass(frozen=True)
class DaySet:
    """One set (step) of an `/allocation` reply: its allocations and its idle cost."""

    allocations: dict[str, Allocation]
    idle: dict[str, float]


class _Properties(msgspec.Struct, gc=False):
    namespace: str = ""
    node: str = ""
    labels: dict[str, str] | None = None
    namespaceLabels: dict[str, str] | None = None


class _Record(msgspec.Struct, gc=False):
    """The fields of an allocation the exporter reads; every other field is skipped unread."""

    properties: _Properties | None = None
    gpuHours: _Hours = None
    # Metadata only, decoded untyped: a bad one is an unknown model, never a bad allocation.
    gpuAllocation: Any = None
    gpuCost: _Cost = None
    gpuCostAdjustment: _Cost = None
    cpuCost: _Cost = None
    cpuCostAdjustment: _Cost = None
    ramCost: _Cost = None
    ramCostAdjustment: _Cost = None
    pvCost: _Cost = None
    pvCostAdjustment: _Cost = None
    networkCost: _Cost = None
    networkCostAdjustment: _Cost = None
    loadBalancerCost: _Cost = None
    loadBalancerCostAdjustment: _Cost = None
    sharedCost: _Cost = None
    externalCost: _Cost = None


class _Envelope(msgspec.Struct):
    # Before mid-2025 the envelope also carried "status"; both forms put the payload in "data".
    data: list[dict[str, _Record] | None] | None
    code: Any = 200
    message: Any = ""


class _RawEnvelope(msgspec.Struct):
    data: msgspec.Raw
    code: Any = 200
    message: Any = ""


_STRICT = msgspec.json.Decoder(_Envelope)
_LOOSE = msgspec.json.Decoder(_RawEnvelope)
_SETS = msgspec.json.Decoder(list[dict[str, msgspec.Raw] | None] | None)
_RECORD = msgspec.json.Decoder(_Record)
_ANY = msgspec.json.Decoder()


def decode_sets(content: bytes | bytearray, hours: float | None, tally: Tally) -> list[DaySet]:
    """Every set of an `/allocation` body, oldest first, with bad records dropped into `tally`.

    `hours` (the length of one set) bounds GPU-hours. msgspec.DecodeError (not JSON) and
    UpstreamPayloadError (a bad envelope) are the caller's to report.
    """
    high = MAX_GPUS * (YEAR_HOURS if hours is None else hours)
    try:
        envelope = _STRICT.decode(content)
    except msgspec.ValidationError:
        return [_day(step, high, tally) for step in _loose_sets(content)]
    _check_code(envelope.code, envelope.message)
    steps = envelope.data or ()
    return [_day(step.items(), high, tally) for step in steps if step is not None]


def merge_into(merged: dict[str, Allocation], more: Iterable[Allocation]) -> None:
    """Add allocations to `merged` by name: costs and GPU-hours add up, the first labels stay."""
    for allocation in more:
        first = merged.get(allocation.name)
        merged[allocation.name] = allocation if first is None else _sum(first, allocation)


def _loose_sets(
    content: bytes | bytearray,
) -> Iterable[Iterable[tuple[str, _Record | BadRecord]]]:
    try:
        envelope = _LOOSE.decode(content)
    except msgspec.ValidationError:
        raise UpstreamPayloadError(
            f"{SOURCE}: /allocation: expected an object with a data field"
        ) from None
    _check_code(envelope.code, envelope.message)
    try:
        steps = _SETS.decode(envelope.data)
    except msgspec.ValidationError:
        data = _ANY.decode(envelope.data)
        if not isinstance(data, list):
            raise UpstreamPayloadError(
                f"{SOURCE}: /allocation data: expected a list of sets"
            ) from None
        raise UpstreamPayloadError(f"{SOURCE}: /allocation set: expected an object") from None
    for step in steps or ():
        if step is not None:
            yield ((name, _one(name, raw)) for name, raw in step.items())


def _one(name: str, raw: msgspec.Raw) -> _Record | BadRecord:
    try:
        return _RECORD.decode(raw)
    except msgspec.ValidationError:
        return _reason(name, _ANY.decode(raw))


def _check_code(code: Any, message: Any) -> None:
    if code != 200:
        raise UpstreamPayloadError(f"{SOURCE}: /allocation: code {code}: {message}")


def _day(records: Iterable[tuple[str, _Record | BadRecord]], high: float, tally: Tally) -> DaySet:
    allocations: dict[str, Allocation] = {}
    idle: dict[str, float] = {}
    shared: dict[Any, Any] = {}  # one copy of each namespace, node and namespace label map
    for name, record in records:
        try:
            if isinstance(record, BadRecord):
                raise record
            if name == IDLE_KEY:
                for resource, amount in _idle(record).items():
                    idle[resource] = idle.get(resource, 0.0) + amount
                continue
            allocation = _allocation(name, record, high, shared)
        except BadRecord as exc:
            tally.drop(exc)
            continue
        # One key per set (a JSON object); the same key in another step is more of it.
        first = allocations.get(name)
        allocations[name] = allocation if first is None else _sum(first, allocation)
    return DaySet(allocations, idle)


def _idle(r: _Record) -> dict[str, float]:
    values = (r.gpuCost or 0.0, r.cpuCost or 0.0, r.ramCost or 0.0)
    _resolution(IDLE_KEY, values)
    return dict(zip(IDLE_FIELDS, values, strict=True))


def _allocation(name: str, r: _Record, high: float, shared: dict[Any, Any]) -> Allocation:
    gpu_hours = r.gpuHours or 0.0
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
    _resolution(name, fields)
    g, ga, c, ca, m, ma, s, sa, n, na, lb, lba, sh, ex, _ = fields
    props = r.properties or _Properties()
    # Every allocation of a namespace or node repeats the same strings and namespace labels:
    # keeping one copy of each takes a fifth off what a 50,000-allocation set holds.
    ns_labels = props.namespaceLabels or {}
    return Allocation(
        name=name,
        namespace=shared.setdefault(props.namespace, props.namespace),
        node=shared.setdefault(props.node, props.node),
        labels=props.labels or {},
        namespace_labels=shared.setdefault(tuple(ns_labels.items()), ns_labels),
        costs={
            "gpu": g + ga,
            "cpu": c + ca,
            "ram": m + ma,
            "storage": s + sa,
            "network": n + na,
            "other": lb + lba + sh + ex,
        },
        gpu_hours=gpu_hours,
        gpu_model=_gpu_model(r.gpuAllocation),
    )


def _gpu_model(gpu: Any) -> str:
    model = gpu.get("gpuModel") if isinstance(gpu, dict) else None
    return model if isinstance(model, str) else ""


def _one_model(a: str, b: str) -> str:
    # A set that did not name the model says nothing; two that disagree make it unknown.
    if not a or not b:
        return a or b
    return a if a == b else ""


def _resolution(name: str, values: tuple[float, ...]) -> None:
    # Builtins only (the smallest non-zero magnitude): this runs for every record.
    smallest = min(filter(None, map(abs, values)), default=RESOLUTION)
    if smallest < RESOLUTION:
        raise BadRecord(OUT_OF_RANGE, f"allocation {name!r}: {smallest:g} is below the resolution")


def _sum(a: Allocation, b: Allocation) -> Allocation:
    costs = {c: a.costs.get(c, 0.0) + b.costs.get(c, 0.0) for c in COMPONENT_FIELDS}
    hours, model = a.gpu_hours + b.gpu_hours, _one_model(a.gpu_model, b.gpu_model)
    return Allocation(
        a.name, a.namespace, a.node, a.labels, a.namespace_labels, costs, hours, model
    )


# --- the reason a record that failed typed decoding is dropped --------------------------------


def _reason(name: str, raw: Any) -> BadRecord:
    """Why a record broke the types or bounds, found by checking its fields one by one."""
    try:
        if not isinstance(raw, dict):
            raise BadRecord(WRONG_TYPE, f"allocation {name!r} is not an object")
        if name == IDLE_KEY:
            _numbers(name, raw, IDLE_FIELDS.values(), -MAX_COST, MAX_COST)
        else:
            props = raw.get("properties") or {}
            if not isinstance(props, dict):
                raise BadRecord(WRONG_TYPE, f"allocation {name!r}: properties is not an object")
            _numbers(name, raw, _NUMBERS, -MAX_COST, MAX_COST)
            for key in ("namespace", "node"):
                if not isinstance(props.get(key, ""), str):
                    raise BadRecord(WRONG_TYPE, f"allocation {name!r}: properties.{key}")
            for key in ("labels", "namespaceLabels"):
                _labels(name, key, props.get(key) or {})
            _numbers(name, raw, ("gpuHours",), 0.0, MAX_GPUS * YEAR_HOURS)
    except BadRecord as exc:
        return exc
    # Valid field by field but not as a whole: a number type the struct does not take.
    return BadRecord(WRONG_TYPE, f"allocation {name!r} does not have OpenCost's field types")


def _numbers(name: str, raw: dict[str, Any], keys: Iterable[str], low: float, high: float) -> None:
    for key in keys:
        what = f"allocation {name!r}: {key}"
        number(raw.get(key), what, low=low, high=high, null=0.0, tiny=RESOLUTION)


_NUMBERS = tuple(f for fields in COMPONENT_FIELDS.values() for f in fields)


def _labels(name: str, key: str, value: Any) -> None:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BadRecord(WRONG_TYPE, f"allocation {name!r}: properties.{key} is not a map")

"""OpenCost compact records: every value the join reads survives decoding, and sets sum exactly."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from exporter.sources.checks import Tally
from exporter.sources.opencost.records import COMPONENT_FIELDS, Allocation, Totals, merge_into
from exporter.sources.opencost.wire import IDLE_KEY, decode_into

# Every field that feeds a component, each with its own value, so a lost field shows.
FIELD_VALUES = {
    "gpuCost": 11.5,
    "gpuCostAdjustment": -0.25,
    "cpuCost": 3.125,
    "cpuCostAdjustment": 0.5,
    "ramCost": 2.0625,
    "ramCostAdjustment": 0.03125,
    "pvCost": 7.75,
    "pvCostAdjustment": 1,
    "networkCost": 0.40625,
    "networkCostAdjustment": 0.0078125,
    "loadBalancerCost": 4.5,
    "loadBalancerCostAdjustment": 0.125,
    "sharedCost": 16,
    "externalCost": 32.25,
}
EXPECTED_COSTS = {
    "gpu": 11.25,
    "cpu": 3.625,
    "ram": 2.09375,
    "storage": 8.75,
    "network": 0.4140625,
    "other": 52.875,
}


def _record(name: str, **extra: Any) -> dict[str, Any]:
    # Keys in an order our fakes never write, whole numbers as JSON integers, unknown keys.
    return {
        "totalCost": 1e6,
        "gpuAllocation": {"gpuUUID": "GPU-1", "gpuModel": "NVIDIA L4", "isGPUShared": None},
        **FIELD_VALUES,
        "properties": {
            "labels": {"team": "t", "app": "a"},
            "namespaceLabels": {"owner": "o"},
            "annotations": {"finops_io_product": "rag", "huge": "x" * 100_000},
            "namespaceAnnotations": {"finops_io_environment": "prod"},
            "controllerKind": "statefulset",
            "node": "node-7",
            "namespace": "ns-x",
        },
        "futureField": {"nested": [1, 2]},
        "gpuHours": 3,
        "name": name,
        **extra,
    }


def _decode(
    *sets: dict[str, Any] | None, totals: Totals | None = None
) -> tuple[Totals, Tally, int]:
    totals = Totals() if totals is None else totals
    tally = Tally()
    body = json.dumps({"status": "success", "code": 200, "data": list(sets)}).encode()
    return totals, tally, decode_into(body, None, tally, totals)


def test_a_compact_record_carries_every_value_the_join_reads() -> None:
    totals, _, kept = _decode({"n/ns-x/sts:db": _record("n/ns-x/sts:db")})
    (allocation,) = totals.build().values()
    assert kept == 1
    assert allocation == Allocation(
        name="n/ns-x/sts:db",
        namespace="ns-x",
        node="node-7",
        labels={"team": "t", "app": "a"},
        namespace_labels={"owner": "o"},
        costs=EXPECTED_COSTS,
        gpu_hours=3.0,
        gpu_model="NVIDIA L4",
        # An annotation too long to be a label value is dropped, not the allocation.
        annotations={"finops_io_product": "rag"},
        namespace_annotations={"finops_io_environment": "prod"},
    )
    # A field added to the record must be checked above too, or this fails.
    assert [f.name for f in msgspec.structs.fields(Allocation)] == [
        "name",
        "namespace",
        "node",
        "labels",
        "namespace_labels",
        "costs",
        "gpu_hours",
        "gpu_model",
        "usage",
        "annotations",
        "namespace_annotations",
    ]
    assert list(allocation.costs) == list(COMPONENT_FIELDS)


def _as_allocation(name: str, costs: dict[str, float], hours: float, model: str) -> Allocation:
    return Allocation(name, "ns", "node", {}, {}, costs, hours, model)


def test_sets_sum_in_read_order_to_the_same_floats_as_merging_allocations() -> None:
    # Values whose sum depends on the order of addition: only read order gives these floats.
    amounts = [0.1, 0.2, 0.3, 1e8, -1e8, 0.7]
    base = _as_allocation("a", dict.fromkeys(COMPONENT_FIELDS, 0.1), 1.0, "L4")
    totals = Totals({"a": base}, {"gpu": 0.1})
    expected: dict[str, Allocation] = {"a": base}
    for i, amount in enumerate(amounts):
        model = "L4" if i != 3 else ""  # a set that does not name the model says nothing
        # A cost is never negative; an adjustment (a credit) may be.
        record: dict[str, Any] = {k: _signed(k, amount) for k in FIELD_VALUES}
        record["gpuHours"] = amount if amount > 0 else 0
        record["gpuAllocation"] = {"gpuModel": model} if model else None
        _decode({"a": record, IDLE_KEY: {"gpuCost": amount}}, totals=totals)
        costs = {c: _left_sum([_signed(k, amount) for k in f]) for c, f in COMPONENT_FIELDS.items()}
        hours = amount if amount > 0 else 0.0
        merge_into(expected, [_as_allocation("a", costs, hours, model)])
    built = totals.build()["a"]
    parts = [a + _signed("gpuCostAdjustment", a) for a in amounts]
    assert built.costs["gpu"] != _left_sum([0.1, *sorted(parts)])
    assert built.costs == expected["a"].costs
    assert built.gpu_hours == expected["a"].gpu_hours
    assert built.gpu_model == "L4"
    assert totals.idle["gpu"] == _left_sum([0.1, *amounts])
    assert base.costs == dict.fromkeys(COMPONENT_FIELDS, 0.1)  # the base is never changed


def _signed(field: str, amount: float) -> float:
    return amount if field.endswith("Adjustment") else abs(amount)


def _left_sum(values: list[float]) -> float:
    total = 0.0
    for value in values:
        total += value
    return total


def test_models_that_disagree_across_sets_make_the_model_unknown() -> None:
    l4 = _record("x", gpuAllocation={"gpuModel": "NVIDIA L4"})
    h100 = _record("x", gpuAllocation={"gpuModel": "NVIDIA H100 80GB HBM3"})
    totals, _, _ = _decode({"x": l4}, {"x": h100})
    assert totals.build()["x"].gpu_model == ""


def test_a_bad_record_in_one_set_drops_only_that_record() -> None:
    bad = _record("b", cpuCost="1.5")  # a string where OpenCost writes a number
    totals, tally, kept = _decode({"a": _record("a")}, {"a": _record("a"), "b": bad}, None)
    assert kept == 2
    assert tally.bad() == 1
    built = totals.build()
    assert set(built) == {"a"}
    assert built["a"].costs["gpu"] == 22.5  # both sets of "a", the good one of set two too


def test_has_data_is_false_for_sets_of_zero_idle_only() -> None:
    totals, _, kept = _decode({IDLE_KEY: {"gpuCost": 0, "cpuCost": None, "ramCost": 0}})
    assert kept == 3  # the three idle resources were read, all zero
    assert not totals.has_data
    totals, _, _ = _decode({IDLE_KEY: {"gpuCost": 0, "cpuCost": 0.5, "ramCost": 0}})
    assert totals.has_data


def test_usage_is_read_and_adds_up_across_sets_and_merges() -> None:
    gib = float(2**30)
    first = {"cpuCoreHours": 12.5, "ramByteHours": 48 * gib, "networkTransferBytes": 3 * gib}
    second = {"cpuCoreHours": 1.5, "pvByteHours": 10 * gib}
    totals, _, _ = _decode(
        {"a": _record("a", **first)}, {"a": _record("a", **second)}, {"a": _record("a")}
    )
    (allocation,) = totals.build().values()
    expected = {"cpu": 14.0, "ram": 48 * gib, "storage": 10 * gib, "network": 3 * gib}
    assert allocation.usage == expected
    # Nothing consumed, nothing kept: a record without the fields has no usage.
    assert _decode({"b": _record("b")})[0].build()["b"].usage == {}
    merged: dict[str, Allocation] = {}
    merge_into(merged, [allocation, allocation])
    assert merged["a"].usage == {k: 2 * v for k, v in expected.items()}


def test_negative_usage_drops_the_record() -> None:
    totals, tally, kept = _decode({"a": _record("a", cpuCoreHours=-1)})
    assert kept == 0 and totals.build() == {}
    assert sum(tally.frozen().values()) == 1

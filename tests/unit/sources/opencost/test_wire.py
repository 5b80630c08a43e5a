"""Typed decoding of `/allocation` bytes: the fast path and the record-by-record path agree."""

from __future__ import annotations

import json
from typing import Any

import pytest

from exporter.errors import UpstreamPayloadError
from exporter.sources.checks import Tally
from exporter.sources.opencost import source as opencost

# Go spelling, as OpenCost writes it: integers for whole numbers, keys in its own order, the
# idle entry first, fields this exporter never reads, and a null for NaN.
GO_BODY = (
    b'{"code":200,"data":[{"__idle__":{"name":"__idle__","properties":{"cluster":"c"},'
    b'"cpuCost":3,"gpuCost":5.5,"ramCost":null,"gpuAllocation":null},'
    b'"n1/ns-a/job:x":{"totalCost":9,"gpuCost":4,"gpuHours":2,"cpuCost":1.25,'
    b'"cpuCostAdjustment":-0.25,"properties":{"labels":{"team":"a"},"node":"n1",'
    b'"namespace":"ns-a","services":["s"]},"pvs":{"cluster/pv-1":{"byteHours":1,"cost":0.5}},'
    b'"lbAllocations":null,"rawAllocationOnly":{"cpuCoreUsageMax":0.1}}}]}\n'
)


def _parse(content: bytes, tally: Tally | None = None) -> Any:
    return opencost.parse_allocation_response(content, hours=24.0, tally=tally)


def test_go_spelling_decodes_from_bytes() -> None:
    (alloc,), idle = _parse(GO_BODY)
    assert (alloc.name, alloc.namespace, alloc.node) == ("n1/ns-a/job:x", "ns-a", "n1")
    assert dict(alloc.labels) == {"team": "a"} and dict(alloc.namespace_labels) == {}
    # Only the components that cost something: a missing one is 0 to every reader.
    assert alloc.costs == {"gpu": 4.0, "cpu": 1.0}
    assert alloc.gpu_hours == 2.0 and idle == {"gpu": 5.5, "cpu": 3.0, "ram": 0.0}


def test_one_bad_record_leaves_the_others_exactly_as_the_fast_path_reads_them() -> None:
    good = json.loads(GO_BODY)
    bad = json.loads(GO_BODY)
    bad["data"][0]["n1/ns-b/job:y"] = {"properties": {"namespace": "ns-b"}, "gpuCost": True}
    fast, slow, tally = _parse(json.dumps(good).encode()), _parse(json.dumps(bad).encode()), Tally()
    assert _parse(json.dumps(bad).encode(), tally) == fast == slow
    assert tally.frozen() == {"wrong_type": 1}


@pytest.mark.parametrize(
    ("spelling", "reason"),
    [
        ("0.0000000001", "out_of_range"),  # below the resolution, spelt without an exponent
        ("-1e-10", "out_of_range"),
        ('"1.5"', "wrong_type"),
        ("[1]", "wrong_type"),
    ],
)
def test_a_bad_number_in_any_spelling_drops_its_record(spelling: str, reason: str) -> None:
    content = GO_BODY.replace(b'"cpuCost":1.25', b'"cpuCost":' + spelling.encode())
    tally = Tally()
    allocations, idle = _parse(content, tally)
    assert allocations == () and idle["gpu"] == 5.5
    assert tally.frozen() == {reason: 1}


@pytest.mark.parametrize(
    "field",
    [
        "gpuCost",
        "cpuCost",
        "ramCost",
        "pvCost",
        "networkCost",
        "loadBalancerCost",
        "sharedCost",
        "externalCost",
    ],
)
def test_a_negative_cost_drops_its_record(field: str) -> None:
    # A cost is hours at a price: -1e6 is a corrupt record, never a team's refund.
    body = json.loads(GO_BODY)
    body["data"][0]["n1/ns-a/job:x"][field] = -1_000_000
    tally = Tally()
    allocations, _ = _parse(json.dumps(body).encode(), tally)
    assert allocations == () and tally.frozen() == {"out_of_range": 1}


def test_a_negative_adjustment_and_older_opencosts_negative_idle_are_read() -> None:
    # An adjustment is a credit after reconciling with the bill; OpenCost before 1.118 wrote
    # negative idle when allocations overran the assets (docs/sources/opencost.md).
    content = GO_BODY.replace(b'"cpuCostAdjustment":-0.25', b'"cpuCostAdjustment":-1.25')
    content = content.replace(b'"cpuCost":3,', b'"cpuCost":-3,')
    tally = Tally()
    (alloc,), idle = _parse(content, tally)
    assert alloc.costs.get("cpu", 0.0) == 0.0 and idle["cpu"] == -3.0
    assert tally.frozen() == {}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"code":200,"data":{"a":{}}}', "expected a list of sets"),
        (b'{"code":200,"data":[[1]]}', "expected an object"),
        (b'{"code":500,"data":null,"message":"boom"}', "code 500: boom"),
        (b'{"code":200}', "expected an object with a data field"),
        (b"[]", "expected an object with a data field"),
        (b"{'code': 200}", "did not return JSON"),
        # Not JSON (RFC 8259) either, and nothing Go can write: refused whole, not one record.
        (GO_BODY.replace(b'"cpuCost":1.25', b'"cpuCost":1e400'), "did not return JSON"),
        (GO_BODY.replace(b'"cpuCost":1.25', b'"cpuCost":NaN'), "did not return JSON"),
    ],
)
def test_a_bad_envelope_fails_the_read(content: bytes, message: str) -> None:
    with pytest.raises(UpstreamPayloadError, match=message):
        _parse(content)


def test_the_old_envelope_and_null_sets() -> None:
    content = GO_BODY.replace(
        b'{"code":200,"data":[', b'{"code":200,"status":"success","data":[null,'
    )
    (alloc,), _ = _parse(content)
    assert alloc.costs["gpu"] == 4.0
    assert _parse(b'{"code":200,"data":null}') == ((), {})


def test_a_namespaces_allocations_share_one_copy_of_its_strings_and_labels() -> None:
    def record(node: str, controller: str, ns_labels: dict[str, str]) -> dict[str, Any]:
        props = {"namespace": "ns-a", "node": node, "namespaceLabels": ns_labels}
        return {"properties": {**props, "labels": {"app": controller}}, "cpuCost": 1}

    team_a = {"team": "a", "kubernetes_io_metadata_name": "ns-a"}
    step = {
        f"{node}/ns-a/{c}": record(node, c, dict(team_a))
        for node, c in (("n1", "job:x"), ("n2", "job:y"), ("n1", "job:z"))
    }
    step["n3/ns-a/job:w"] = record("n3", "job:w", {"team": "b"})  # relabelled between reads
    allocations, _ = _parse(json.dumps({"code": 200, "data": [step]}).encode())
    x, y, z, w = (next(a for a in allocations if a.name.endswith(c)) for c in "xyzw")
    assert x.namespace_labels == team_a and x.namespace_labels is y.namespace_labels
    assert w.namespace_labels == {"team": "b"}
    assert x.namespace is y.namespace is w.namespace and x.node is z.node
    assert [dict(a.labels) for a in (x, y, z)] == [{"app": c} for c in ("job:x", "job:y", "job:z")]


def _one(fields: dict[str, Any]) -> Any:
    record = {"properties": {"namespace": "ns-a", "node": "n1"}, "gpuCost": 4, **fields}
    body = json.dumps({"code": 200, "data": [{"n1/ns-a/job:x": record}]}).encode()
    tally = Tally()
    (alloc,), _ = _parse(body, tally)
    return alloc, tally.frozen()


def test_gpu_hours_are_opencosts_own_else_its_gpu_count_over_its_minutes() -> None:
    # gpuHours wins; without it, 2 GPUs over 90 minutes are 3 GPU-hours (gpuCount is gpuHours
    # over the window's hours); with neither, none.
    assert _one({"gpuHours": 2, "gpuCount": 5, "minutes": 60})[0].gpu_hours == 2.0
    assert _one({"gpuCount": 2, "minutes": 90})[0].gpu_hours == 3.0
    assert _one({"gpuCount": 2})[0].gpu_hours == 0.0
    assert _one({"minutes": 90})[0].gpu_hours == 0.0


def test_a_gpu_count_or_minutes_out_of_bounds_drops_the_record() -> None:
    for fields in ({"gpuCount": -1, "minutes": 60}, {"gpuCount": 1, "minutes": 1e12}):
        record = {"properties": {"namespace": "ns-a", "node": "n1"}, "gpuCost": 4, **fields}
        body = json.dumps({"code": 200, "data": [{"n1/ns-a/job:x": record}]}).encode()
        tally = Tally()
        allocations, _ = _parse(body, tally)
        assert list(allocations) == [] and sum(tally.frozen().values()) == 1


def test_label_values_that_repeat_are_one_string_across_allocations() -> None:
    step = {
        f"n1/ns-a/job:{c}": {
            "properties": {"namespace": "ns-a", "node": "n1", "labels": {"team": "a", "app": c}},
            "cpuCost": 1,
        }
        for c in "xy"
    }
    allocations, _ = _parse(json.dumps({"code": 200, "data": [step]}).encode())
    x, y = allocations
    assert x.labels == {"team": "a", "app": "x"} and y.labels == {"team": "a", "app": "y"}
    assert x.labels["team"] is y.labels["team"]


@pytest.mark.parametrize(
    ("fields", "kept"),
    [
        ({"gpuCost": 1e-10}, False),
        ({"cpuCostAdjustment": -1e-10}, False),
        ({"gpuHours": 1e-12}, False),
        ({"cpuCost": 0, "ramCost": 0.0, "gpuCostAdjustment": -0.5}, True),
        ({"cpuCost": 1e-9}, True),
    ],
)
def test_a_figure_below_opencosts_resolution_drops_its_record_and_zero_does_not(
    fields: dict[str, Any], kept: bool
) -> None:
    record = {"properties": {"namespace": "ns-a", "node": "n1"}, "gpuCost": 4, **fields}
    tally = Tally()
    allocations, _ = _parse(
        json.dumps({"code": 200, "data": [{"n1/ns-a/job:x": record}]}).encode(), tally
    )
    assert (len(allocations), sum(tally.frozen().values())) == ((1, 0) if kept else (0, 1))


def test_usage_keeps_only_what_was_consumed_in_component_order() -> None:
    alloc, _ = _one({"networkTransferBytes": 5, "cpuCoreHours": 2, "pvByteHours": 0})
    assert list(alloc.usage.items()) == [("cpu", 2.0), ("network", 5.0)]
    assert _one({"cpuCoreHours": 0, "ramByteHours": None})[0].usage == {}

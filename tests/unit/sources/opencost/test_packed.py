"""Closed days packed: what unpacks, folds and sums is exactly what the Allocations would hold."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.sources.checks import Tally
from exporter.sources.opencost.packed import PackedAllocations
from exporter.sources.opencost.records import Allocation, Totals, merge_into
from exporter.sources.opencost.wire import decode_into
from tests.support.properties import examples

_COST_FIELDS = ("gpuCost", "cpuCostAdjustment", "ramCost", "pvCost", "networkCost", "sharedCost")
_USAGE_FIELDS = ("cpuCoreHours", "ramByteHours", "pvByteHours", "networkTransferBytes")
_figure = st.one_of(st.just(0), st.floats(0.001, 1e4), st.integers(1, 10**6))


@st.composite
def _records(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from([f"n/ns/job:{i}" for i in range(8)]), unique=True))
    out: dict[str, Any] = {}
    for name in names:
        record: dict[str, Any] = {
            "properties": {
                "namespace": "ns",
                "node": draw(st.sampled_from(["n1", "n2"])),
                "labels": {"team": draw(st.sampled_from(["a", "b"]))},
            },
            "gpuHours": draw(_figure),
        }
        for field in draw(st.lists(st.sampled_from(_COST_FIELDS + _USAGE_FIELDS), unique=True)):
            record[field] = draw(_figure)
        model = draw(st.sampled_from([None, "NVIDIA L4", "NVIDIA H100"]))
        record["gpuAllocation"] = None if model is None else {"gpuModel": model}
        out[name] = record
    return out


def _allocations(records: dict[str, Any]) -> list[Allocation]:
    totals = Totals()
    body = json.dumps({"code": 200, "data": [records]}).encode()
    decode_into(body, None, Tally(), totals)
    return list(totals.build().values())


@settings(max_examples=examples(100))
@given(st.lists(_records(), min_size=1, max_size=4))
def test_packed_days_fold_and_unpack_to_exactly_the_merged_allocations(
    days: list[dict[str, Any]],
) -> None:
    merged: dict[str, Allocation] = {}
    packed = PackedAllocations()
    for day in days:
        allocations = _allocations(day)
        merge_into(merged, allocations)
        packed = packed.folded(allocations)
    assert len(packed) == len(merged) and list(packed.names()) == list(merged)
    assert {a.name: a for a in packed.allocations()} == merged
    assert all(packed.allocation(name) == merged[name] for name in merged)


@settings(max_examples=examples(100))
@given(_records(), _records())
def test_a_set_added_on_packed_days_builds_what_it_builds_on_their_allocations(
    closed: dict[str, Any], open_days: dict[str, Any]
) -> None:
    base = {a.name: a for a in _allocations(closed)}
    body = json.dumps({"code": 200, "data": [open_days]}).encode()
    on_dict, on_packed = Totals(base), Totals(PackedAllocations.of(base.values()))
    for totals in (on_dict, on_packed):
        decode_into(body, None, Tally(), totals)
    assert on_packed.build() == on_dict.build()
    assert on_packed.has_data == on_dict.has_data


def test_folding_leaves_the_packed_days_it_started_from_as_they_were() -> None:
    # A read that fails after folding keeps the days it had: they must not have moved.
    (one,) = _allocations({"n/ns/job:x": {"properties": {"namespace": "ns"}, "cpuCost": 2}})
    packed = PackedAllocations.of([one])
    folded = packed.folded([one])
    assert packed.allocation(one.name).costs["cpu"] == 2.0
    assert folded.allocation(one.name).costs["cpu"] == 4.0
    assert "n/ns/job:y" not in folded and len(PackedAllocations()) == 0

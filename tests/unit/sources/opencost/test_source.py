"""OpenCost source: both envelopes, nulls, unknown fields, and every kind of error body."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from exporter.config.schema import Config, OpenCostConfig, SourcesConfig
from exporter.errors import (
    UpstreamIncomplete,
    UpstreamPayloadError,
    UpstreamStatusError,
    UpstreamUnavailable,
)
from exporter.sources.checks import Tally
from exporter.sources.opencost import source as opencost
from exporter.sources.reading import Reading
from tests.conftest import UTC_ZONE

NOW = datetime(2026, 11, 15, 12, 0, tzinfo=UTC)
MONTH = datetime(2026, 11, 1, tzinfo=UTC)  # the 1st in UTC, the default time zone
CFG = OpenCostConfig(url="http://opencost:9003")

ALLOC = {
    "name": "gpu-node-1/ns-a/deployment:web",
    "properties": {
        "cluster": "default-cluster",
        "node": "gpu-node-1",
        "namespace": "ns-a",
        "controller": "deployment:web",
        "controllerKind": "deployment",
        "labels": {"team": "a", "app_kubernetes_io_name": "web"},
        "namespaceLabels": {"kubernetes_io_metadata_name": "ns-a"},
    },
    "gpuHours": 2,
    "gpuCost": 2.8,
    "gpuCostAdjustment": 0,
    "cpuCost": 1.25,
    "cpuCostAdjustment": None,
    "ramCost": 0.5,
    "pvCost": 0.1,
    "networkCost": 0.05,
    "loadBalancerCost": 0.02,
    "externalCost": 0,
    "sharedCost": 0,
    "totalCost": 4.72,
    "gpuAllocation": {"gpuUsageAverage": 0.4, "saturation": {"smActiveAvg": 0.3}},
    "someFutureField": {"nested": [1, 2]},
}
IDLE = {
    "name": "__idle__",
    "properties": {"cluster": "default-cluster"},
    "cpuCost": 3.0,
    "gpuCost": 5.6,
    "ramCost": None,
}


def _client(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.Client:
    return opencost.build_client(CFG, transport=httpx.MockTransport(handler))


def _json(body: Any, status: int = 200) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: httpx.Response(status, json=body)


@pytest.mark.parametrize("envelope", [{"code": 200}, {"code": 200, "status": "success"}])
def test_both_envelopes_nulls_and_unknown_fields(envelope: dict[str, Any]) -> None:
    body = {**envelope, "data": [{ALLOC["name"]: ALLOC, "__idle__": IDLE}]}
    window = opencost.fetch_window(_client(_json(body)), NOW - timedelta(hours=1), NOW)
    (alloc,) = window.allocations
    assert alloc.namespace == "ns-a" and alloc.node == "gpu-node-1"
    assert alloc.labels["team"] == "a"
    assert alloc.costs == {
        "gpu": 2.8,
        "cpu": 1.25,
        "ram": 0.5,
        "storage": 0.1,
        "network": 0.05,
        "other": 0.02,
    }
    assert window.idle == {"gpu": 5.6, "cpu": 3.0, "ram": 0.0}
    assert window.hours == 1.0
    assert window.total() == pytest.approx(4.72 + 8.6)


def test_query_asks_for_idle_unshared_and_an_explicit_window() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"code": 200, "data": None})

    snapshot = opencost.KIND.fetch_from_config(
        _client(handler),
        Config(sources=SourcesConfig(opencost=CFG)),
        Reading.open(NOW, UTC_ZONE),
    )
    assert snapshot.month.allocations == () and snapshot.month.idle == {}
    common = {
        "aggregate": "node,namespace,controller",
        "includeIdle": "true",
        "shareIdle": "false",
        "includeAggregatedMetadata": "true",
    }
    now, yesterday = int(NOW.timestamp()), int(datetime(2026, 11, 14, tzinfo=UTC).timestamp())
    # The rate window's node assets come last; their query is the assets module's to test.
    assert [r.url.path for r in seen] == ["/allocation"] * 3 + ["/assets"]
    rate, closed, open_days = (dict(r.url.params) for r in seen[:3])
    assert rate == {"window": f"{now - 3600},{now}", "accumulate": "true", **common}
    # A first read: the closed days summed by OpenCost, then yesterday and today, summed too.
    assert closed == {
        "window": f"{int(MONTH.timestamp())},{yesterday}",
        "step": "1d",
        "accumulate": "true",
        **common,
    }
    assert open_days == {
        "window": f"{yesterday},{now}",
        "step": "1d",
        "accumulate": "true",
        **common,
    }
    assert seen[0].headers["user-agent"].startswith("gpu-chargeback-exporter/")


def test_several_sets_and_null_sets_are_summed() -> None:
    body = {
        "code": 200,
        "data": [{ALLOC["name"]: ALLOC, "__idle__": IDLE}, None, {ALLOC["name"]: ALLOC}],
    }
    allocations, idle = opencost.parse_allocation_response(body)
    assert allocations[0].costs["gpu"] == pytest.approx(5.6)
    assert allocations[0].gpu_hours == 4
    assert idle["gpu"] == 5.6


@pytest.mark.parametrize(
    ("status", "body", "content_type", "reason", "text"),
    [
        (
            500,
            {"code": 500, "data": None, "message": "error computing allocations: boom"},
            "application/json",
            "http_5xx",
            "error computing allocations: boom",
        ),
        (
            400,
            "Invalid 'window' parameter: illegal window: x\n"
            '{"code":500,"data":null,"message":"illegal window: [nil, nil)"}\n',
            "text/plain",
            "http_4xx",
            "Invalid 'window' parameter: illegal window: x",
        ),
        (404, "404 page not found\n", "text/plain", "http_4xx", "404 page not found"),
        (
            500,
            {"code": 500, "status": "", "data": None, "message": "Error: old build"},
            "application/json",
            "http_5xx",
            "Error: old build",
        ),
    ],
)
def test_error_bodies_json_or_text(
    status: int, body: Any, content_type: str, reason: str, text: str
) -> None:
    content = json.dumps(body) if isinstance(body, dict) else body

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, text=content, headers={"content-type": content_type})

    with pytest.raises(UpstreamStatusError) as caught:
        opencost.fetch_window(_client(handler), NOW - timedelta(hours=1), NOW)
    assert caught.value.reason == reason
    assert text in str(caught.value)
    assert str(caught.value).startswith(f"opencost: HTTP {status} from /allocation: ")


@pytest.mark.parametrize(
    "body",
    [
        {"code": 200, "data": [{"x": "not an allocation"}]},
        {"code": 200, "data": [{"a": {**ALLOC, "gpuCost": "2.8"}}]},
        {"code": 200, "data": [{"a": {**ALLOC, "properties": {"labels": ["team"]}}}]},
        {"code": 200, "data": {"not": "a list"}},
        {"data": None, "code": 500, "message": "inconsistent"},
        ["not", "an", "envelope"],
    ],
)
def test_malformed_payloads_raise_payload_errors(body: Any) -> None:
    with pytest.raises(UpstreamPayloadError):
        opencost.fetch_window(_client(_json(body)), NOW - timedelta(hours=1), NOW)


def test_non_json_200_is_malformed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>proxy login</html>")

    with pytest.raises(UpstreamPayloadError, match="did not return JSON"):
        opencost.fetch_window(_client(handler), NOW - timedelta(hours=1), NOW)


@pytest.mark.parametrize(
    ("exc", "reason"),
    [(httpx.ReadTimeout("slow"), "timeout"), (httpx.ConnectError("refused"), "unreachable")],
)
def test_transport_errors(exc: Exception, reason: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    with pytest.raises(UpstreamUnavailable) as caught:
        opencost.fetch_window(_client(handler), NOW - timedelta(hours=1), NOW)
    assert caught.value.reason == reason


def test_node_assets() -> None:
    body = {
        "code": 200,
        "data": {
            "k1": {
                "type": "Node",
                "properties": {"name": "n1"},
                "cpuCost": 1.0,
                "gpuCost": 4.0,
                "ramCost": 0.5,
            },
            "k2": {"type": "Disk", "properties": {"name": "d1"}, "totalCost": 9.0},
        },
    }
    assert opencost.parse_node_assets(body) == {"n1": {"gpu": 4.0, "cpu": 1.0, "ram": 0.5}}
    # A node asset without a name is one bad record: dropped and counted, not the whole body.
    tally = Tally()
    nameless = {"code": 200, "data": {"k": {"type": "Node"}, **body["data"]}}  # type: ignore[dict-item]
    assert opencost.parse_node_assets(nameless, tally=tally) == {
        "n1": {"gpu": 4.0, "cpu": 1.0, "ram": 0.5}
    }
    assert tally.frozen() == {"missing_field": 1}


# --- per-record truth ----------------------------------------------------------------------


def _alloc(ns: str, **costs: Any) -> dict[str, Any]:
    return {"properties": {"namespace": ns, "node": "n1"}, "gpuHours": 1, **costs}


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"gpuCost": 1e308}, "out_of_range"),
        ({"cpuCost": -2e12}, "out_of_range"),
        ({"ramCost": 5e-324}, "out_of_range"),  # below OpenCost's resolution: not its output
        ({"gpuHours": 1e7}, "out_of_range"),  # more than a million GPUs for the 1 h window
        ({"gpuCost": "4.0"}, "wrong_type"),
        ({"properties": {"namespace": 3}}, "wrong_type"),
    ],
)
def test_one_bad_allocation_is_dropped_and_counted(fields: dict[str, Any], reason: str) -> None:
    body = {
        "code": 200,
        "data": [
            {
                "n1/ns-bad/x": {**_alloc("ns-bad"), **fields},
                "n1/ns-ok/y": _alloc("ns-ok", gpuCost=4.0, cpuCostAdjustment=-0.5),
                "__idle__": {"gpuCost": 1.0, "cpuCost": None},
            }
        ],
    }
    tally = Tally()
    allocations, idle = opencost.parse_allocation_response(body, hours=1.0, tally=tally)
    assert [a.namespace for a in allocations] == ["ns-ok"]
    assert allocations[0].costs["gpu"] == 4.0 and allocations[0].costs["cpu"] == -0.5
    assert idle == {"gpu": 1.0, "cpu": 0.0, "ram": 0.0}
    assert tally.frozen() == {reason: 1}


def _window(start: datetime, allocations: int) -> opencost.AllocationSet:
    end = datetime(2026, 11, 15, 12, tzinfo=UTC)
    rows = tuple(
        opencost.Allocation(f"a{i}", "ns", "n1", {}, {}, {"gpu": 1.0}, 1.0)
        for i in range(allocations)
    )
    return opencost.AllocationSet(start, end, rows, {})


def test_an_empty_month_contradicts_the_same_month_with_data_but_not_a_new_month() -> None:
    november, december = datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)
    had = opencost.OpenCostSnapshot(_window(november, 0), _window(november, 2))
    empty = opencost.OpenCostSnapshot(_window(november, 0), _window(november, 0))
    with pytest.raises(UpstreamIncomplete, match="month to date"):
        empty.check_after(had)
    empty.check_after(None)  # the first read has nothing to contradict
    empty.check_after(empty)  # an empty month after an empty month is no news
    new_month = opencost.OpenCostSnapshot(_window(december, 0), _window(december, 0))
    new_month.check_after(had)  # month-to-date legitimately starts again

"""OpenCost node assets: GPU cost, GPU-hours and labels per node, and the fallback on a 404."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from exporter.config.schema import Config, OpenCostConfig, SourcesConfig
from exporter.errors import UpstreamPayloadError, UpstreamStatusError
from exporter.sources.checks import MISSING_FIELD, NON_FINITE, WRONG_TYPE, Tally
from exporter.sources.opencost import source as opencost
from exporter.sources.opencost.assets import fetch_gpu_nodes, parse_gpu_nodes
from exporter.sources.opencost.snapshot import GpuNode, OpenCostSnapshot
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW, UTC_ZONE

START = FIXED_NOW - timedelta(hours=1)
KEY = "GCP/__undefined__/proj/Compute/prod/Node/Kubernetes/{0}/{0}"


def node(name: str, **fields: Any) -> dict[str, Any]:
    """A node asset in OpenCost's field order, numbers printed with %f (6 decimals)."""
    return {
        "type": "Node",
        "properties": {
            "category": "Compute",
            "provider": "GCP",
            "service": "Kubernetes",
            "cluster": "prod",
            "name": name,
            "providerID": name,
        },
        "labels": {"kubernetes_io_hostname": name, "nvidia_com_gpu_product": "NVIDIA-L40S"},
        "window": {"start": "2026-11-15T11:30:00Z", "end": "2026-11-15T12:30:00Z"},
        "minutes": 60.000000,
        "nodeType": "g2-standard-48",
        "cpuCores": 48.000000,
        "GPUHours": 4.000000,
        "cpuCost": 1.200000,
        "gpuCost": 3.600000,
        "gpuCount": 4.000000,
        "ramCost": 0.400000,
        "adjustment": 0.000000,
        "totalCost": 5.200000,
        **fields,
    }


def body(*assets: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    data = {KEY.format(a["properties"].get("name", i)): a for i, a in enumerate(assets)}
    return {"code": 200, "data": data, **envelope}


def test_gpu_nodes_with_their_price_and_labels() -> None:
    disk = {"type": "Disk", "properties": {"name": "pv-1"}, "totalCost": 0.1}
    cpu_only = node("cpu-1", GPUHours=0.0, gpuCount=0.0, gpuCost=0.0)
    reply = body(node("l40s-2"), node("l40s-1", gpuCost=None), cpu_only)
    reply["data"]["disk"] = disk
    got = parse_gpu_nodes(reply, hours=1.0)
    # Sorted by name; a null cost (NaN upstream) is 0; disks and GPU-less nodes are left out.
    assert [n.name for n in got] == ["l40s-1", "l40s-2"]
    assert got[1] == GpuNode(
        "l40s-2",
        4.0,
        4.0,
        3.6,
        {"kubernetes_io_hostname": "l40s-2", "nvidia_com_gpu_product": "NVIDIA-L40S"},
    )
    assert got[1].price == pytest.approx(0.90)
    assert got[0].price == 0.0


def test_old_envelope_and_a_list_of_one_set() -> None:
    old = {"code": 200, "status": "success", "data": [body(node("n1"))["data"]]}
    assert [n.name for n in parse_gpu_nodes(old)] == ["n1"]
    assert parse_gpu_nodes({"code": 200, "data": None}) == ()
    assert parse_gpu_nodes({"code": 200, "data": []}) == ()


def test_a_node_under_two_keys_is_summed() -> None:
    # A replaced node: same name, another provider ID, so another asset key.
    first, second = node("n1"), node("n1", GPUHours=2.0, gpuCost=1.8)
    reply = {"code": 200, "data": {"a/n1/old": first, "b/n1/new": second}}
    (got,) = parse_gpu_nodes(reply)
    assert (got.gpu_hours, got.gpu_count) == (6.0, 4.0)
    assert got.gpu_cost == pytest.approx(5.4)


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        ({"properties": {"cluster": "prod"}}, MISSING_FIELD),
        ({"gpuCost": "3.6"}, WRONG_TYPE),
        ({"labels": ["gpu"]}, WRONG_TYPE),
        ({"GPUHours": float("inf")}, NON_FINITE),
    ],
)
def test_a_broken_node_is_dropped_and_counted(broken: dict[str, Any], reason: str) -> None:
    tally = Tally()
    got = parse_gpu_nodes(body(node("ok"), node("bad", **broken)), tally=tally)
    assert [n.name for n in got] == ["ok"]
    assert tally.frozen() == {reason: 1}


@pytest.mark.parametrize(
    "reply",
    [
        ["not", "an", "envelope"],
        {"code": 500, "data": None, "message": "boom"},
        {"code": 200, "data": "nodes"},
    ],
)
def test_malformed_replies(reply: Any) -> None:
    with pytest.raises(UpstreamPayloadError):
        parse_gpu_nodes(reply)


def _client(status: int, payload: Any, seen: list[httpx.Request]) -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json=payload)

    return httpx.Client(base_url="http://opencost:9003", transport=httpx.MockTransport(answer))


def test_fetch_asks_for_the_window_accumulated() -> None:
    seen: list[httpx.Request] = []
    with _client(200, body(node("n1")), seen) as client:
        got = fetch_gpu_nodes(client, START, FIXED_NOW)
    assert got is not None and [n.name for n in got] == ["n1"]
    assert seen[0].url.path == "/assets"
    window = f"{int(START.timestamp())},{int(FIXED_NOW.timestamp())}"
    assert dict(seen[0].url.params) == {"window": window, "accumulate": "true"}


def test_no_assets_endpoint_means_prices_from_allocations() -> None:
    with _client(404, {"message": "404 page not found"}, []) as client:
        assert fetch_gpu_nodes(client, START, FIXED_NOW) is None


def test_other_errors_fail_the_read() -> None:
    with (
        _client(500, {"code": 500, "data": None, "message": "x"}, []) as client,
        pytest.raises(UpstreamStatusError),
    ):
        fetch_gpu_nodes(client, START, FIXED_NOW)


def _fetch_paths(node_assets: bool) -> tuple[list[str], OpenCostSnapshot]:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/assets":
            return httpx.Response(200, json=body(node("n1")))
        return httpx.Response(200, json={"code": 200, "data": [{}]})

    cfg = OpenCostConfig(url="http://opencost:9003", node_assets=node_assets)
    transport = httpx.MockTransport(answer)
    with httpx.Client(base_url="http://opencost:9003", transport=transport) as client:
        snapshot = opencost.KIND.fetch_from_config(
            client,
            Config(sources=SourcesConfig(opencost=cfg)),
            Reading.open(FIXED_NOW, UTC_ZONE),
        )
    return [r.url.path for r in seen], snapshot


def test_the_opencost_source_reads_node_assets_of_the_rate_window() -> None:
    paths, snapshot = _fetch_paths(node_assets=True)
    # The rate window, the month's closed days and its open days, then the rate window's assets.
    assert paths == ["/allocation"] * 3 + ["/assets"]
    assert snapshot.gpu_nodes is not None and [n.name for n in snapshot.gpu_nodes] == ["n1"]


def test_node_assets_can_be_turned_off() -> None:
    paths, snapshot = _fetch_paths(node_assets=False)
    assert paths == ["/allocation"] * 3
    assert snapshot.gpu_nodes is None

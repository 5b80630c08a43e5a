"""The Kueue source: ClusterQueue pages, version fallback, quantities, RBAC errors, Workloads."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from exporter.config.schema import KueueConfig
from exporter.errors import UpstreamPayloadError, UpstreamStatusError
from exporter.ledger.costs.lending import lend
from exporter.sources.kueue.records import KueueSnapshot
from exporter.sources.kueue.source import build_client, parse_cluster_queue
from tests.unit.sources.kueue.api_server import (
    BASE,
    EXPECTED,
    EXPECTED_FLAVORS,
    GPU,
    TOKEN,
    ApiServer,
    client_for,
    cq,
    fetch,
    flavor,
    group,
    scenario,
    status,
)

# --- the hand-computed scenario ------------------------------------------------------------


def test_v1beta1_only_server_two_pages_numeric_and_string_quantities(token_file: str) -> None:
    server = ApiServer(("v1beta1",), scenario("v1beta1"))
    cfg = KueueConfig(url="https://k8s.example:6443", token_file=token_file, page_size=2)
    with client_for(server, cfg) as client:
        snapshot = fetch(client, cfg)
    assert snapshot == KueueSnapshot(tuple(EXPECTED), flavors=EXPECTED_FLAVORS)
    paths = [(r.url.path, r.url.params.get("continue")) for r in server.seen]
    # Flavors are read in the version the queues were found in, without a second fallback.
    assert paths == [
        (f"{BASE}/v1beta2/clusterqueues", None),
        (f"{BASE}/v1beta1/clusterqueues", None),
        (f"{BASE}/v1beta1/clusterqueues", "2"),
        (f"{BASE}/v1beta1/resourceflavors", None),
    ]
    # Lending: cq-a borrows 2; cq-b alone has lendable min(4 - 1, 3) = 3, so it lends 2.
    assert lend(snapshot.queues)[("cq-b", "h100", GPU)] == 2.0


def test_v1beta2_reads_cohort_name(token_file: str) -> None:
    server = ApiServer(("v1beta2", "v1beta1"), scenario("v1beta2"))
    cfg = KueueConfig(url="https://k8s.example:6443", token_file=token_file)
    with client_for(server, cfg) as client:
        snapshot = fetch(client, cfg)
    assert snapshot.queues == tuple(EXPECTED)
    assert all("v1beta2" in r.url.path for r in server.seen)
    assert server.seen[0].url.params["limit"] == "500"
    assert snapshot.flavors == EXPECTED_FLAVORS


def test_pinned_v1beta1_never_asks_for_v1beta2(token_file: str) -> None:
    server = ApiServer(("v1beta2", "v1beta1"), scenario("v1beta1"))
    cfg = KueueConfig(url="https://k", token_file=token_file, api_version="v1beta1")
    with client_for(server, cfg) as client:
        assert fetch(client, cfg).queues == tuple(EXPECTED)
    assert all("v1beta1" in r.url.path for r in server.seen)


def test_kueue_not_installed(token_file: str) -> None:
    cfg = KueueConfig(url="https://k", token_file=token_file)
    with client_for(ApiServer((), []), cfg) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, cfg)
    assert err.value.status == 404 and "is Kueue installed" in str(err.value)


def test_expired_continue_token_restarts_the_list_once(token_file: str) -> None:
    server = ApiServer(("v1beta2",), scenario("v1beta2"))
    server.expire_continue = 1
    cfg = KueueConfig(url="https://k", token_file=token_file, page_size=2)
    with client_for(server, cfg) as client:
        assert fetch(client, cfg).queues == tuple(EXPECTED)
    server.expire_continue = 2
    with client_for(server, cfg) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, cfg)
    assert err.value.status == 410


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        (
            403,
            "kueue: HTTP 403 listing clusterqueues.kueue.x-k8s.io: the exporter's service "
            "account needs list on clusterqueues in API group kueue.x-k8s.io",
        ),
        (401, "kueue: HTTP 401 listing clusterqueues.kueue.x-k8s.io: the API server rejected"),
    ],
)
def test_auth_errors_name_the_missing_permission_in_one_line(
    token_file: str, code: int, needle: str
) -> None:
    def deny(request: httpx.Request) -> httpx.Response:
        return status(code, "Forbidden", 'clusterqueues is forbidden: User "x" cannot list\nmore')

    cfg = KueueConfig(url="https://k", token_file=token_file)
    with client_for(deny, cfg) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, cfg)
    message = str(err.value)
    assert message.startswith(needle) and "\n" not in message
    assert err.value.reason == "auth" and TOKEN not in message


def test_unset_limits_are_infinite_and_missing_status_is_zero() -> None:
    item = cq("q", "v1beta2", "", [group([GPU], flavor("f", {"name": GPU, "nominalQuota": "1"}))])
    (record,) = parse_cluster_queue(item)
    assert record.borrowing_limit == math.inf and record.lending_limit == math.inf
    assert (record.usage, record.borrowed) == (0.0, 0.0)


def good() -> dict[str, Any]:
    return scenario("v1beta2")[0]


def broken(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    item: dict[str, Any] = json.loads(json.dumps(good()))
    change(item)
    return item


@pytest.mark.parametrize(
    "item",
    [
        [],
        "cq",
        broken(lambda o: o.pop("metadata")),
        broken(lambda o: o["metadata"].update(name=7)),
        broken(lambda o: o["spec"].update(resourceGroups={})),
        broken(
            lambda o: o["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0].update(
                nominalQuota="lots"
            )
        ),
        broken(
            lambda o: o["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0].pop(
                "nominalQuota"
            )
        ),
        broken(
            lambda o: o["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0].update(
                lendingLimit=True
            )
        ),
        broken(
            lambda o: o["spec"]["resourceGroups"][0]["flavors"][0]["resources"].append(
                {"name": "cpu", "nominalQuota": 1}
            )
        ),
        broken(lambda o: o["status"].update(flavorsUsage=[{"name": "h100", "resources": 3}])),
        broken(lambda o: o["status"]["flavorsUsage"][1]["resources"][0].update(total="x")),
        broken(lambda o: o["spec"].update(cohortName=["pool"])),
    ],
)
def test_malformed_cluster_queues_raise_payload_errors(item: Any) -> None:
    with pytest.raises(UpstreamPayloadError):
        parse_cluster_queue(item)


@pytest.mark.parametrize(
    "body", [[], {"kind": "Status"}, {"items": 3}, {"items": [], "metadata": 1}]
)
def test_a_body_that_is_not_a_list_is_a_payload_error(token_file: str, body: Any) -> None:
    cfg = KueueConfig(url="https://k", token_file=token_file)
    answer = httpx.MockTransport(lambda _: httpx.Response(200, json=body))
    with build_client(cfg, answer) as client, pytest.raises(UpstreamPayloadError):
        fetch(client, cfg)


def test_a_body_that_is_not_json_is_a_payload_error(token_file: str) -> None:
    cfg = KueueConfig(url="https://k", token_file=token_file)
    answer = httpx.MockTransport(lambda _: httpx.Response(200, content=b"<html>login</html>"))
    not_json = "did not return JSON: '<html>login</html>'"
    with build_client(cfg, answer) as client, pytest.raises(UpstreamPayloadError, match=not_json):
        fetch(client, cfg)


# --- Workloads beside quota -----------------------------------------------------------------

WORKLOAD_FIXTURE = Path(__file__).parents[3] / "fixtures" / "kueue" / "workload_preempted.json"
LOCAL_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "LocalQueue",
    "metadata": {"namespace": "team-a", "name": "team-a-queue"},
    "spec": {"clusterQueue": "cq-a"},
}


class Forbidding(ApiServer):
    """An API server whose RBAC grants the quota lists but not Workloads."""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/workloads"):
            self.seen.append(request)
            return status(403, "Forbidden", 'workloads.kueue.x-k8s.io is forbidden: User "x"')
        return super().__call__(request)


def test_workloads_are_read_with_their_local_queues_cluster_queue(token_file: str) -> None:
    server = ApiServer(("v1beta2",), scenario("v1beta2"))
    server.lists["workloads"] = [json.loads(WORKLOAD_FIXTURE.read_text(encoding="utf-8"))]
    server.lists["localqueues"] = [LOCAL_QUEUE]
    cfg = KueueConfig(url="https://k8s.example:6443", token_file=token_file, workloads=True)
    with client_for(server, cfg) as client:
        snapshot = fetch(client, cfg)
    assert snapshot.queues == tuple(EXPECTED)
    assert snapshot.scheduling is not None and snapshot.scheduling.missing == ()
    (w,) = snapshot.scheduling.workloads
    assert (w.key, w.cluster_queue, w.gpus, w.ran_seconds) == (
        "team-a/sample-job",
        "cq-a",
        3,
        10800,
    )


def test_workloads_refused_are_missing_and_the_quota_stays_whole(token_file: str) -> None:
    server = Forbidding(("v1beta2",), scenario("v1beta2"))
    cfg = KueueConfig(url="https://k8s.example:6443", token_file=token_file, workloads=True)
    with client_for(server, cfg) as client:
        snapshot = fetch(client, cfg)
    assert snapshot.queues == tuple(EXPECTED)
    assert snapshot.scheduling is not None and snapshot.scheduling.missing == ("workloads",)


def test_workloads_are_not_listed_unless_asked_for(token_file: str) -> None:
    server = ApiServer(("v1beta2",), scenario("v1beta2"))
    cfg = KueueConfig(url="https://k8s.example:6443", token_file=token_file)
    with client_for(server, cfg) as client:
        assert fetch(client, cfg).scheduling is None
    assert not any(r.url.path.endswith("/workloads") for r in server.seen)

"""The fake Kubernetes API server: what the Kueue source reads from it over loopback, its errors."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_kube import make_handler
from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer
from exporter.config.schema import KueueConfig
from exporter.errors import UpstreamStatusError
from exporter.ledger.costs.lending import lend
from exporter.sources.kueue.records import QuotaRecord
from exporter.sources.kueue.source import build_client
from tests.unit.sources.kueue.api_server import BASE, GPU, GiB, fetch

NIGHT = datetime(2026, 3, 10, 23, 30, tzinfo=UTC)  # cq-research runs 3 GPUs on a nominal 2


@pytest.fixture
def fake_api(tmp_path: Path) -> Iterator[Callable[..., tuple[KueueConfig, list[FakeRequest]]]]:
    servers: list[FakeServer] = []
    (tmp_path / "token").write_text("demo-kube-api-token")

    def start(**options: Any) -> tuple[KueueConfig, list[FakeRequest]]:
        handler = make_handler(CLUSTER, lambda: NIGHT, **options)
        seen: list[FakeRequest] = []

        def recording(request: FakeRequest) -> FakeResponse:
            seen.append(request)
            return handler(request)

        server = FakeServer(recording).start()
        servers.append(server)
        return KueueConfig(url=server.url, token_file=str(tmp_path / "token")), seen

    yield start
    for server in servers:
        server.stop()


def night_records() -> dict[tuple[str, str, str], QuotaRecord]:
    return {(r.cluster_queue, r.flavor, r.resource): r for r in _night()}


def _night() -> list[QuotaRecord]:
    return [
        QuotaRecord("cq-research", "gpu-pool", "h100", GPU, 2.0, usage=3.0, borrowed=1.0),
        QuotaRecord("cq-search", "gpu-pool", "h100", GPU, 1.0, usage=1.0),
        QuotaRecord("cq-vision", "gpu-pool", "h100", GPU, 1.0, lending_limit=1.0),
    ]


@pytest.mark.parametrize("v1beta1_only", [False, True])
def test_fetch_from_the_fake_api_server(
    fake_api: Callable[..., tuple[KueueConfig, list[FakeRequest]]], v1beta1_only: bool
) -> None:
    cfg, seen = fake_api(v1beta1_only=v1beta1_only)
    with build_client(cfg) as client:
        snapshot = fetch(client, cfg)
    version = "v1beta1" if v1beta1_only else "v1beta2"
    assert seen[-1].path == f"{BASE}/{version}/resourceflavors"
    gpu_flavor = {f.name: f for f in snapshot.flavors}[CLUSTER.gpu_flavor]
    assert gpu_flavor.node_labels == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    got = {(r.cluster_queue, r.flavor, r.resource): r for r in snapshot.queues}
    assert len(got) == 9  # 3 queues x (cpu, memory, gpu)
    for key, expected in night_records().items():
        assert got[key] == expected
    research_cpu = got[("cq-research", "default-flavor", "cpu")]
    assert (research_cpu.nominal, research_cpu.usage) == (32.0, 24.0)
    assert got[("cq-research", "default-flavor", "memory")].usage == 160 * GiB
    assert not any(r.path.endswith("/cohorts") for r in seen)  # Cohorts are never read
    # The page size is capped at 2, so three queues take a second page.
    assert sum(1 for r in seen if r.path.endswith("/clusterqueues") and r.arg("continue")) == 1
    assert lend(snapshot.queues)[("cq-vision", "h100", GPU)] == 1.0


def test_fake_rejects_a_wrong_token(
    fake_api: Callable[..., tuple[KueueConfig, list[FakeRequest]]],
) -> None:
    cfg, _ = fake_api(token="another-token")
    with build_client(cfg) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, cfg)
    assert err.value.status == 401 and "\n" not in str(err.value)
    assert "demo-kube-api-token" not in str(err.value)


def test_fake_forbidden_gives_the_rbac_line(
    fake_api: Callable[..., tuple[KueueConfig, list[FakeRequest]]],
) -> None:
    cfg, _ = fake_api(forbidden=True)
    with build_client(cfg) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, cfg)
    assert str(err.value) == (
        "kueue: HTTP 403 listing clusterqueues.kueue.x-k8s.io: the exporter's service account "
        "needs list on clusterqueues in API group kueue.x-k8s.io"
    )


def fake_get(path: str, **query: str) -> FakeResponse:
    handler = make_handler(CLUSTER, lambda: NIGHT)
    headers = {"authorization": "Bearer demo-kube-api-token"}
    return handler(FakeRequest("GET", path, {k: [v] for k, v in query.items()}, headers))


def test_fake_bad_continue_is_410_gone_with_a_status_body() -> None:
    response = fake_get(f"{BASE}/v1beta2/clusterqueues", limit="2", **{"continue": "garbage"})
    body = json.loads(response.body)
    assert response.status == 410
    assert (body["kind"], body["status"], body["reason"], body["code"]) == (
        "Status",
        "Failure",
        "Expired",
        410,
    )


def test_fake_serves_quantities_as_numbers_and_strings_and_discovery() -> None:
    page = json.loads(fake_get(f"{BASE}/v1beta2/clusterqueues", limit="10").body)
    assert page["kind"] == "ClusterQueueList" and "continue" in page["metadata"]
    quotas = [
        r["nominalQuota"]
        for item in page["items"]
        for g in item["spec"]["resourceGroups"]
        for f in g["flavors"]
        for r in f["resources"]
    ]
    assert any(isinstance(q, int) for q in quotas) and any(isinstance(q, str) for q in quotas)
    groups = json.loads(fake_get("/apis").body)["groups"]
    assert groups[0]["preferredVersion"]["version"] == "v1beta2"
    assert fake_get(f"{BASE}/v1beta2/topologies").status == 404
    listed = json.loads(fake_get(f"{BASE}/v1beta2/workloads", limit="2").body)
    assert listed["kind"] == "WorkloadList"


def test_the_fake_preempts_research_night_sweep_now_and_then() -> None:
    from datetime import UTC, datetime

    from chargeback_demo.fake_workloads import workloads
    from exporter.sources.checks import Tally
    from exporter.sources.kueue.workloads import parse_workloads

    tally = Tally()
    now = datetime(2026, 12, 10, 12, tzinfo=UTC)  # the night of the 9th was preempted at 08:00
    found = parse_workloads(workloads(CLUSTER, now, "v1beta2"), tally)
    assert not tally
    preempted = [w for w in found if w.evictions]
    assert {w.name for w in preempted} == {"sweep-1130", "sweep-1203", "sweep-1206", "sweep-1209"}
    (waiting,) = [w for w in preempted if w.evicted_now]
    assert (waiting.name, waiting.gpus, waiting.ran_seconds) == ("sweep-1209", 2, 14 * 3600)

"""The fake dcgm-exporter over loopback: what the source reads matches the cluster model."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import httpx
import pytest

from chargeback_demo.cluster import CLUSTER, Cluster
from chargeback_demo.fake_dcgm import FakeDcgmOptions, gpu_uuid, make_handler
from chargeback_demo.httpfake import FakeServer
from exporter.config.schema import DcgmConfig
from exporter.sources.dcgm.source import build_client
from tests.unit.sources.dcgm.test_source import by_slot, fetch

NIGHT = datetime(2026, 3, 10, 23, 30, tzinfo=UTC)  # sweep holds GPU 2
MORNING = datetime(2026, 3, 10, 7, 0, tzinfo=UTC)  # sweep holds GPU 2 until 08
# The demo's node is full at every hour; without the night sweep, GPUs 1 and 2 are free at 07.
SPARE = dataclasses.replace(
    CLUSTER, workloads=tuple(w for w in CLUSTER.workloads if w.name != "sweep")
)


@pytest.fixture
def serve() -> Iterator[Callable[..., DcgmConfig]]:
    servers: list[FakeServer] = []

    def start(
        now: datetime, options: FakeDcgmOptions | None = None, cluster: Cluster = CLUSTER
    ) -> DcgmConfig:
        server = FakeServer(make_handler(cluster, lambda: now, options)).start()
        servers.append(server)
        return DcgmConfig(urls=(f"{server.url}/metrics",))

    yield start
    for server in servers:
        server.stop()


@pytest.mark.parametrize(
    "options",
    [
        FakeDcgmOptions(),
        FakeDcgmOptions(lowercase_hostname=True),
        FakeDcgmOptions(empty_pod_labels=True),
        FakeDcgmOptions(old_namespace=True),
        FakeDcgmOptions(pod_labels=True),
    ],
)
def test_fetch_from_the_fake_matches_the_cluster_model(
    serve: Callable[..., DcgmConfig], options: FakeDcgmOptions
) -> None:
    cfg = serve(MORNING, options, SPARE)
    with build_client(cfg) as client:
        snapshot = fetch(client, cfg)
    assert len(snapshot.gpus) == CLUSTER.gpu_count
    for record in snapshot.gpus:
        index = int(record.gpu)
        holder = SPARE.gpu_holder(index, MORNING)
        assert record.node == CLUSTER.node and record.uuid == gpu_uuid(CLUSTER, index)
        assert record.model == CLUSTER.gpu_model and record.share == 1.0
        if holder is None:
            assert not record.allocated and record.utilisation == 0.0
            continue
        assert (record.namespace, record.pod) == (holder.namespace, holder.pod)
        assert record.utilisation == pytest.approx(holder.utilisation_at(MORNING), abs=1e-6)
        if options.pod_labels:
            assert record.labels.get("team") == holder.labels.get("team")
    assert not by_slot(list(snapshot.gpus))[("2", "")].allocated


def test_fake_at_night_has_every_gpu_held(serve: Callable[..., DcgmConfig]) -> None:
    cfg = serve(NIGHT)
    with build_client(cfg) as client:
        snapshot = fetch(client, cfg)
    assert all(r.allocated for r in snapshot.gpus)
    assert by_slot(list(snapshot.gpus))[("2", "")].pod == "sweep-0"


def test_fake_health_and_unknown_paths(serve: Callable[..., DcgmConfig]) -> None:
    urls = serve(NIGHT).urls
    assert urls is not None
    base = urls[0].removesuffix("/metrics")
    with httpx.Client() as client:
        assert client.get(f"{base}/health").status_code == 200
        assert client.get(f"{base}/nope").status_code == 404

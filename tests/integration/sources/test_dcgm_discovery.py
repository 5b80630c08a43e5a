"""DCGM discovery against a fake API server and fake exporters on loopback addresses."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.endpoint_slices import FakeEndpoint, FakeEndpointSlice
from chargeback_demo.fake_dcgm import make_handler as dcgm_handler
from chargeback_demo.fake_kube import make_handler as kube_handler
from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer
from exporter.config.schema import Config
from exporter.errors import UpstreamIncomplete, UpstreamStatusError
from exporter.exposition.catalogue.health import SOURCE_ENDPOINTS
from exporter.exposition.series import series
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.sources.dcgm.source import KIND, build_client
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import CLOCK, FIXED_NOW

TOKEN = "discovery-token-0123456789"


@dataclasses.dataclass
class Exporters:
    """Fake dcgm-exporters on one port of several loopback addresses, and what they saw."""

    port: int
    seen: dict[str, list[Mapping[str, str]]]
    release: threading.Event


def _counting(address: str, exporters: Exporters, handler: Callable[..., FakeResponse]) -> Any:
    def handle(request: FakeRequest) -> FakeResponse:
        exporters.seen.setdefault(address, []).append(request.headers)
        return handler(request)

    return handle


@pytest.fixture
def exporters() -> Iterator[Exporters]:
    """127.0.0.1 answers for node-a; 127.0.0.2 hangs past any deadline; 127.0.0.3 answers too."""
    state = Exporters(0, {}, threading.Event())
    node_a = dcgm_handler(dataclasses.replace(CLUSTER, node="node-a"), CLOCK)
    node_c = dcgm_handler(dataclasses.replace(CLUSTER, node="node-c"), CLOCK)

    def hang(request: FakeRequest) -> FakeResponse:
        state.release.wait(10)
        return node_a(request)

    servers: list[FakeServer] = []
    for _ in range(20):  # the same port must be free on all three addresses
        try:
            first = FakeServer(_counting("127.0.0.1", state, node_a)).start()
            servers = [first]
            state.port = int(first.url.rsplit(":", 1)[1])
            for address, handler in (("127.0.0.2", hang), ("127.0.0.3", node_c)):
                wrapped = _counting(address, state, handler)
                servers.append(FakeServer(wrapped, host=address, port=state.port).start())
            break
        except OSError:
            for server in servers:
                server.stop()
            servers = []
    assert servers, "no port free on 127.0.0.1-3"
    yield state
    state.release.set()
    for server in servers:
        server.stop()


def _kube(slices: tuple[FakeEndpointSlice, ...]) -> FakeServer:
    return FakeServer(kube_handler(CLUSTER, CLOCK, token=TOKEN, endpoint_slices=slices)).start()


def _config(tmp_path: Path, api: str, **discovery: Any) -> Config:
    token = tmp_path / "token"
    token.write_text(TOKEN, encoding="utf-8")
    section = {"url": api, "token_file": str(token), **discovery}
    dcgm = {"discovery": section, "timeout": "500ms"}
    return Config.model_validate({"sources": {"dcgm": dcgm}})


def _three(port: int) -> tuple[FakeEndpointSlice, ...]:
    ready = FakeEndpoint("127.0.0.1", "node-a")
    slow = FakeEndpoint("127.0.0.2", "node-b")
    unready = FakeEndpoint("127.0.0.3", "node-c", ready=False)
    slice_ = FakeEndpointSlice("gpu-operator", "nvidia-dcgm-exporter", port, (ready, slow))
    other = FakeEndpointSlice("gpu-operator", "nvidia-dcgm-exporter", port, (unready,))
    # Another Service's slice in the same namespace must not be read.
    stranger = FakeEndpointSlice("gpu-operator", "node-exporter", port, (unready,), "metrics")
    return (slice_, stranger, other)


def test_ready_endpoints_count_and_a_failed_one_is_counted(
    exporters: Exporters, tmp_path: Path
) -> None:
    api = _kube(_three(exporters.port))
    try:
        config = _config(tmp_path, api.url)
        assert config.sources.dcgm is not None
        with build_client(config.sources.dcgm) as client:
            snapshot = KIND.fetch_from_config(client, config, Reading.open(FIXED_NOW, config.zone))
    finally:
        api.stop()
    assert snapshot.endpoints == {"scraped": 1, "failed": 1, "not_ready": 1}
    assert {g.node for g in snapshot.gpus} == {"node-a"}
    assert len(snapshot.gpus) >= CLUSTER.gpu_count
    # The not-ready pod was never asked; the hanging one was, once (its deadline ended it).
    assert "127.0.0.3" not in exporters.seen
    assert len(exporters.seen["127.0.0.2"]) == 1
    # The service-account token goes to the API server only, never to a node's exporter.
    for headers in exporters.seen.values():
        assert all("authorization" not in h for h in headers)


def test_the_endpoint_counts_are_published_with_the_gpus(
    exporters: Exporters, tmp_path: Path
) -> None:
    api = _kube(_three(exporters.port))
    try:
        config = _config(tmp_path, api.url)
        assert config.sources.dcgm is not None
        with build_client(config.sources.dcgm) as client:
            snapshot = KIND.fetch_from_config(client, config, Reading.open(FIXED_NOW, config.zone))
    finally:
        api.stop()
    samples = series(
        join(
            config,
            Attributor(config),
            Snapshots(dcgm=snapshot),
            Reading.open(FIXED_NOW, config.zone),
        )
    )
    got = {dict(s.labels)["state"]: s.value for s in samples if s.family is SOURCE_ENDPOINTS}
    assert got == {"scraped": 1.0, "failed": 1.0, "not_ready": 1.0}


def test_no_ready_endpoint_fails_the_refresh(exporters: Exporters, tmp_path: Path) -> None:
    unready = FakeEndpoint("127.0.0.3", "node-c", ready=False)
    slices = (
        FakeEndpointSlice("gpu-operator", "nvidia-dcgm-exporter", exporters.port, (unready,)),
    )
    api = _kube(slices)
    try:
        config = _config(tmp_path, api.url)
        assert config.sources.dcgm is not None
        with build_client(config.sources.dcgm) as client, pytest.raises(UpstreamIncomplete) as err:
            KIND.fetch_from_config(client, config, Reading.open(FIXED_NOW, config.zone))
    finally:
        api.stop()
    assert "no ready endpoint" in str(err.value) and "1 not ready" in str(err.value)


def test_every_endpoint_failing_fails_the_refresh(exporters: Exporters, tmp_path: Path) -> None:
    slow = FakeEndpoint("127.0.0.2", "node-b")
    slices = (FakeEndpointSlice("gpu-operator", "nvidia-dcgm-exporter", exporters.port, (slow,)),)
    api = _kube(slices)
    try:
        config = _config(tmp_path, api.url)
        assert config.sources.dcgm is not None
        with build_client(config.sources.dcgm) as client, pytest.raises(UpstreamIncomplete) as err:
            KIND.fetch_from_config(client, config, Reading.open(FIXED_NOW, config.zone))
    finally:
        api.stop()
    assert "every endpoint failed" in str(err.value) and "node-b" in str(err.value)


def test_forbidden_names_the_role_the_exporter_needs(tmp_path: Path) -> None:
    api = FakeServer(kube_handler(CLUSTER, CLOCK, token=TOKEN, forbidden=True)).start()
    try:
        config = _config(tmp_path, api.url)
        assert config.sources.dcgm is not None
        with build_client(config.sources.dcgm) as client, pytest.raises(UpstreamStatusError) as err:
            KIND.fetch_from_config(client, config, Reading.open(FIXED_NOW, config.zone))
    finally:
        api.stop()
    assert err.value.reason == "auth"
    assert "endpointslices" in str(err.value) and "'gpu-operator'" in str(err.value)

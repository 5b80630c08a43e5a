"""DCGM discovery: EndpointSlices of dcgm-exporter's Service, and every ready endpoint scraped."""

from __future__ import annotations

import dataclasses
import json
import random
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_dcgm import make_handler as dcgm_handler
from chargeback_demo.fake_kube import FakeEndpoint, FakeEndpointSlice
from chargeback_demo.fake_kube import make_handler as kube_handler
from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer
from exporter.config.schema import Config, DcgmDiscovery, load_config
from exporter.errors import ConfigError, UpstreamIncomplete, UpstreamStatusError
from exporter.exposition.catalogue import SOURCE_ENDPOINTS
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.sources.dcgm.discovery import list_endpoints, parse_slices
from exporter.sources.dcgm.source import build_client, fetch
from exporter.sources.table import Records
from tests.conftest import CLOCK, FIXED_NOW

TOKEN = "discovery-token"


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
            snapshot = fetch(client, config, FIXED_NOW)
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
            snapshot = fetch(client, config, FIXED_NOW)
    finally:
        api.stop()
    samples = join(config, Attributor(config), Records(dcgm=snapshot), FIXED_NOW).samples
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
            fetch(client, config, FIXED_NOW)
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
            fetch(client, config, FIXED_NOW)
    finally:
        api.stop()
    assert "every endpoint failed" in str(err.value) and "node-b" in str(err.value)


def test_forbidden_names_the_role_the_exporter_needs(tmp_path: Path) -> None:
    api = FakeServer(kube_handler(CLUSTER, CLOCK, token=TOKEN, forbidden=True)).start()
    try:
        config = _config(tmp_path, api.url)
        assert config.sources.dcgm is not None
        with build_client(config.sources.dcgm) as client, pytest.raises(UpstreamStatusError) as err:
            fetch(client, config, FIXED_NOW)
    finally:
        api.stop()
    assert err.value.reason == "auth"
    assert "endpointslices" in str(err.value) and "'gpu-operator'" in str(err.value)


# --- payload shapes unlike the fake's ------------------------------------------------------


def _shuffled(value: Any, rng: random.Random) -> Any:
    """The same JSON with every object's keys in another order."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: _shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


SLICES: list[dict[str, Any]] = [
    {
        "kind": "EndpointSlice",  # items of a watch or a get carry these; lists may not
        "apiVersion": "discovery.k8s.io/v1",
        "metadata": {"name": "dcgm-v4", "annotations": {"note": "extra fields are fine"}},
        "addressType": "IPv4",
        "endpoints": [
            # No conditions at all: an unknown state, which consumers take as ready.
            {"addresses": ["10.0.0.1", "10.0.0.99"], "nodeName": "gpu-1"},
            {"addresses": ["10.0.0.2"], "conditions": {"ready": None}, "zone": "a"},
            # Terminating but still serving: not ready, so not scraped.
            {
                "addresses": ["10.0.0.3"],
                "conditions": {"ready": False, "serving": True, "terminating": True},
                "nodeName": "gpu-3",
                "hints": {"forZones": [{"name": "a"}]},
            },
        ],
        "ports": [
            {"name": "http-other", "port": 8080, "protocol": "TCP", "appProtocol": "http"},
            {"name": "gpu-metrics", "port": 9400, "protocol": "TCP"},
        ],
    },
    {
        "metadata": {"name": "dcgm-v6"},
        "addressType": "IPv6",
        "endpoints": [
            {"addresses": ["fd00::5"], "conditions": {"ready": True}, "nodeName": "gpu-5"},
            # The same IPv4 endpoint again (a slice being rewritten): scraped once.
        ],
        "ports": [{"name": "gpu-metrics", "port": 9400}],
    },
    {
        "metadata": {"name": "dcgm-again"},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"], "nodeName": "gpu-1"}],
        "ports": [{"port": 9400, "name": "gpu-metrics"}],
    },
    # A slice with no endpoints yet omits the key; one of another port is skipped.
    {"metadata": {"name": "empty"}, "addressType": "IPv4", "ports": None},
    {
        "metadata": {"name": "wrong-port"},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.7"]}],
        "ports": [{"name": "metrics", "port": 9100}],
    },
]


def test_endpoint_slice_rules_on_shapes_unlike_the_fakes() -> None:
    rng = random.Random(7)
    pages = [SLICES[:2], SLICES[2:]]
    seen: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        second = request.url.params.get("continue") == "page-2"
        body = {
            "items": pages[1 if second else 0],
            "metadata": {} if second else {"continue": "page-2", "remainingItemCount": 3},
            "kind": "EndpointSliceList",
        }
        return httpx.Response(200, text=json.dumps(_shuffled(body, rng)))

    transport = httpx.MockTransport(answer)
    with httpx.Client(base_url="https://api.invalid", transport=transport) as kube:
        found = list_endpoints(kube, DcgmDiscovery(namespace="gpus", service="dcgm"))
    assert [e.url for e in found.ready] == [
        "http://10.0.0.1:9400/metrics",
        "http://10.0.0.2:9400/metrics",
        "http://[fd00::5]:9400/metrics",
    ]
    assert [e.node for e in found.ready] == ["gpu-1", "10.0.0.2", "gpu-5"]
    assert found.not_ready == 1
    assert seen[0].path == "/apis/discovery.k8s.io/v1/namespaces/gpus/endpointslices"
    assert seen[0].params["labelSelector"] == "kubernetes.io/service-name=dcgm"
    assert len(seen) == 2 and seen[1].params["continue"] == "page-2"


def test_port_by_number_scheme_and_path() -> None:
    discovery = DcgmDiscovery(port="9400", scheme="https", path="/dcgm/metrics")
    found = parse_slices(SLICES[:1], discovery)
    assert found.ready[0].url == "https://10.0.0.1:9400/dcgm/metrics"


def test_a_malformed_slice_is_a_payload_error() -> None:
    bad = [{"metadata": {"name": "x"}, "endpoints": "none", "ports": [{"name": "gpu-metrics"}]}]
    # A port without a number cannot be scraped: the slice is skipped before its endpoints.
    assert parse_slices(bad, DcgmDiscovery()).ready == ()
    bad[0]["ports"] = [{"name": "gpu-metrics", "port": 9400}]
    with pytest.raises(Exception, match="endpoints is not a list"):
        parse_slices(bad, DcgmDiscovery())


# --- config --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (
            'sources:\n  dcgm:\n    urls: ["http://a:9400/metrics"]\n    discovery: {}\n',
            3,
            "set exactly one of urls, discovery or prometheus",
        ),
        ("sources:\n  dcgm:\n    interval: 30s\n", 3, "set exactly one of urls, discovery"),
        (
            "sources:\n  dcgm:\n    discovery: {}\n    prometheus: {url: 'http://p:9090'}\n",
            3,
            "set exactly one",
        ),
    ],
)
def test_exactly_one_way_to_read_dcgm(
    write_config: Callable[[str], str], text: str, line: int, message: str
) -> None:
    path = write_config(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    issue = caught.value.issues[0]
    assert issue.key == "sources.dcgm" and message in issue.message
    assert caught.value.lines()[0].startswith(f"{path}:")


def test_discovery_defaults_are_the_gpu_operators(write_config: Callable[[str], str]) -> None:
    config = load_config(write_config("sources:\n  dcgm:\n    discovery: {}\n"))
    assert config.sources.dcgm is not None
    d = config.sources.dcgm.discovery
    assert d is not None
    assert (d.namespace, d.service, d.port, d.concurrency) == (
        "gpu-operator",
        "nvidia-dcgm-exporter",
        "gpu-metrics",
        16,
    )
    assert d.in_cluster


def test_discovery_refuses_two_api_servers(write_config: Callable[[str], str]) -> None:
    text = "sources:\n  dcgm:\n    discovery:\n      url: https://k:6443\n      kubeconfig: k\n"
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(text))
    assert caught.value.issues[0].key == "sources.dcgm.discovery"


def test_in_cluster_without_the_service_host_names_the_dcgm_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    config = Config.model_validate({"sources": {"dcgm": {"discovery": {}}}})
    assert config.sources.dcgm is not None
    with pytest.raises(ConfigError) as caught:
        build_client(config.sources.dcgm)
    assert caught.value.issues[0].key == "sources.dcgm.discovery.in_cluster"

"""DCGM discovery: the rules on EndpointSlices, their shapes, and the discovery config."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from exporter.config.schema import Config, DcgmDiscovery, load_config
from exporter.errors import ConfigError
from exporter.sources.dcgm.discovery import list_endpoints, parse_slices
from exporter.sources.dcgm.source import build_client

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

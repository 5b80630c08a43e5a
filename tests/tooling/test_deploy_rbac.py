"""The RBAC the manifests grant is exactly what the code's Kubernetes API requests need."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import kubernetes_validate  # type: ignore[import-untyped]
import yaml

from exporter.config.schema import Config
from exporter.sources.dcgm import discovery as dcgm_discovery
from exporter.sources.dcgm.source import fetch_discovered
from exporter.sources.kueue import source as kueue
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW
from tests.tooling.kustomize import render

RBAC = Path(__file__).parents[2] / "deploy" / "kubernetes" / "rbac.yaml"
DCGM_RBAC = Path(__file__).parents[2] / "deploy" / "dcgm-discovery" / "rbac.yaml"
# /apis/<group>/<version>[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]] or /api/v1/...
_PATH = re.compile(
    r"^/(?:api/v1|apis/(?P<group>[^/]+)/[^/]+)(?:/namespaces/(?P<namespace>[^/]+))?"
    r"/(?P<resource>[^/]+)(?P<named>/[^/]+)?"
)

Permission = tuple[str, str, str]  # (apiGroup, resource, verb)


def _queue(name: str) -> dict[str, Any]:
    # Key order and fields unlike our fakes': status first, a v1beta1 `cohort`.
    return {
        "status": {
            "flavorsUsage": [{"resources": [{"total": "1", "name": "nvidia.com/gpu"}], "name": "f"}]
        },
        "spec": {
            "cohort": "c",
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {"resources": [{"nominalQuota": 2, "name": "nvidia.com/gpu"}], "name": "f"}
                    ],
                }
            ],
        },
        "metadata": {"name": name},
    }


def _verb(request: httpx.Request) -> Permission:
    """The RBAC verb the API server's authorizer checks for this request."""
    found = _PATH.match(request.url.path)
    assert found is not None, request.url.path
    if request.method == "GET":
        if request.url.params.get("watch") in ("1", "true"):
            verb = "watch"
        else:
            verb = "get" if found["named"] else "list"
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}[
            request.method
        ]
    return (found["group"] or "", found["resource"], verb)


def _kueue_needs() -> set[Permission]:
    """Run the Kueue source through every path it can take: the v1beta1 fallback and paging."""
    needed: set[Permission] = set()

    calls = 0

    def answer(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        needed.add(_verb(request))
        if "/v1beta2/" in request.url.path:
            return httpx.Response(404, json={"kind": "Status", "code": 404})
        if request.url.params.get("continue"):
            return httpx.Response(200, json={"metadata": {}, "items": [_queue("b")]})
        page = {"metadata": {"continue": "t", "remainingItemCount": 1}, "items": [_queue("a")]}
        return httpx.Response(200, json=page)

    kueue_cfg = {"url": "https://api.invalid:6443", "workloads": True}
    config = Config.model_validate({"sources": {"kueue": kueue_cfg}})
    transport = httpx.MockTransport(answer)
    with httpx.Client(base_url="https://api.invalid:6443", transport=transport) as client:
        snapshot = kueue.KIND.fetch_from_config(
            client, config, Reading.open(FIXED_NOW, config.zone)
        )
    # Both pages of both lists were read, after the fallback: every request the source makes
    # was seen (the flavor list answers with queue objects, which parse as label-less flavors).
    assert {q.cluster_queue for q in snapshot.queues} == {"a", "b"}
    assert {f.name for f in snapshot.flavors} == {"a", "b"}
    # Workloads and LocalQueues, two pages each (the queue objects parse as nothing useful).
    assert calls == 9
    return needed


_DCGM_TEXT = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-0",Hostname="n"} 50\n'


def _dcgm_discovery_needs() -> tuple[set[Permission], set[str]]:
    """The DCGM source with discovery on: its API requests (two pages) and their namespaces."""
    needed: set[Permission] = set()
    namespaces: set[str] = set()
    config = Config.model_validate({"sources": {"dcgm": {"discovery": {}}}})
    assert config.sources.dcgm is not None and config.sources.dcgm.discovery is not None

    def api(request: httpx.Request) -> httpx.Response:
        needed.add(_verb(request))
        namespaces.add(_PATH.match(request.url.path)["namespace"])  # type: ignore[index]
        endpoint = {"addresses": ["10.1.2.3"]}
        item = {"endpoints": [endpoint], "ports": [{"name": "gpu-metrics", "port": 9400}]}
        meta = {} if request.url.params.get("continue") else {"continue": "t"}
        return httpx.Response(200, json={"metadata": meta, "items": [item]})

    def node(request: httpx.Request) -> httpx.Response:
        assert request.url.host == "10.1.2.3"  # never the API server's paths
        return httpx.Response(200, text=_DCGM_TEXT)

    client = dcgm_discovery.DiscoveryClient(
        httpx.Client(base_url="https://api.invalid", transport=httpx.MockTransport(api)),
        config.sources.dcgm,
        transport=httpx.MockTransport(node),
    )
    with client:
        snapshot = fetch_discovered(client, config.sources.dcgm.discovery)
    assert snapshot.endpoints["scraped"] == 1 and len(snapshot.gpus) == 1
    return needed, namespaces


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def test_dcgm_discovery_only_lists_endpoint_slices_in_one_namespace() -> None:
    needed, namespaces = _dcgm_discovery_needs()
    assert needed == {("discovery.k8s.io", "endpointslices", "list")}
    assert namespaces == {"gpu-operator"}


def test_the_discovery_role_grants_exactly_that_where_dcgm_runs() -> None:
    needed, namespaces = _dcgm_discovery_needs()
    docs = _docs(DCGM_RBAC)
    role = next(d for d in docs if d["kind"] == "Role")
    binding = next(d for d in docs if d["kind"] == "RoleBinding")
    granted = {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    assert granted == needed
    assert {role["metadata"]["namespace"], binding["metadata"]["namespace"]} == namespaces
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    # Bound to the ServiceAccount the base runs the exporter as.
    account = next(d for d in _docs(RBAC) if d["kind"] == "ServiceAccount")["metadata"]
    (subject,) = binding["subjects"]
    assert (subject["name"], subject["namespace"]) == (account["name"], account["namespace"])
    for doc in docs:
        kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)


def _granted(kind: str) -> set[Permission]:
    docs = _docs(RBAC)
    return {
        (group, resource, verb)
        for doc in docs
        if doc["kind"] == kind
        for rule in doc["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def test_the_kueue_source_only_lists_queues_flavors_and_workloads() -> None:
    assert _kueue_needs() == {
        ("kueue.x-k8s.io", "clusterqueues", "list"),
        ("kueue.x-k8s.io", "resourceflavors", "list"),
        ("kueue.x-k8s.io", "workloads", "list"),
        ("kueue.x-k8s.io", "localqueues", "list"),
    }


def test_the_cluster_role_grants_exactly_what_the_sources_request() -> None:
    # ClusterQueues and ResourceFlavors are cluster-scoped: their permissions live in the
    # ClusterRole.
    assert _granted("ClusterRole") == _kueue_needs()


def test_the_verb_mapping_follows_the_api_server() -> None:
    def verb(method: str, url: str) -> Permission:
        return _verb(httpx.Request(method, f"https://k{url}"))

    assert verb("GET", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq") == (
        "kueue.x-k8s.io",
        "clusterqueues",
        "get",
    )
    assert verb("GET", "/api/v1/pods?watch=true") == ("", "pods", "watch")
    assert verb("GET", "/api/v1/pods") == ("", "pods", "list")


def test_the_discovery_kustomization_keeps_the_dcgm_namespace() -> None:
    docs = render(DCGM_RBAC.parent)
    assert {(d["kind"], d["metadata"]["namespace"]) for d in docs} == {
        ("Role", "gpu-operator"),
        ("RoleBinding", "gpu-operator"),
    }
    (binding,) = [d for d in docs if d["kind"] == "RoleBinding"]
    assert binding["subjects"][0]["namespace"] == "monitoring"

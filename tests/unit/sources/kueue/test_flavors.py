"""ResourceFlavor parsing: shapes unlike our fake's, absent nodeLabels, broken items, the fake."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_kube import make_handler
from chargeback_demo.httpfake import FakeRequest
from exporter.sources.checks import MISSING_FIELD, WRONG_TYPE, BadRecord, Tally
from exporter.sources.kueue.flavors import (
    FlavorRecord,
    parse_resource_flavor,
    parse_resource_flavors,
)
from tests.conftest import CLOCK

# As `kubectl get resourceflavor -o json` prints a real one: status-less, spec last, with taints,
# tolerations and a topology the exporter does not need, and labels in no particular order.
REAL = {
    "metadata": {
        "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update"}],
        "finalizers": ["kueue.x-k8s.io/resource-in-use"],
        "name": "l40s-spot",
        "generation": 2,
        "uid": "6f1d2c3b-0000-4000-8000-000000000001",
        "resourceVersion": "918273",
    },
    "kind": "ResourceFlavor",
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "spec": {
        "topologyName": "default",
        "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
        "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
        "nodeLabels": {
            "node.kubernetes.io/lifecycle": "spot",
            "nvidia.com/gpu.product": "NVIDIA-L40S",
        },
    },
}


def test_a_real_flavor_keeps_only_name_and_node_labels() -> None:
    assert parse_resource_flavor(REAL) == FlavorRecord(
        "l40s-spot",
        {"node.kubernetes.io/lifecycle": "spot", "nvidia.com/gpu.product": "NVIDIA-L40S"},
    )


@pytest.mark.parametrize(
    "spec",
    [{}, None, {"nodeLabels": None}, {"nodeLabels": {}}, {"nodeTaints": []}],
)
def test_absent_node_labels_mean_every_node(spec: Any) -> None:
    item: dict[str, Any] = {"metadata": {"name": "default-flavor"}}
    if spec is not None:
        item["spec"] = spec
    assert parse_resource_flavor(item) == FlavorRecord("default-flavor", {})


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ("not an object", WRONG_TYPE),
        ({"spec": {}}, MISSING_FIELD),
        ({"metadata": {"name": ""}}, MISSING_FIELD),
        ({"metadata": {"name": "f"}, "spec": ["x"]}, WRONG_TYPE),
        ({"metadata": {"name": "f"}, "spec": {"nodeLabels": ["a=b"]}}, WRONG_TYPE),
        ({"metadata": {"name": "f"}, "spec": {"nodeLabels": {"gpus": 8}}}, WRONG_TYPE),
    ],
)
def test_broken_flavors_are_bad_records(item: Any, reason: str) -> None:
    with pytest.raises(BadRecord) as caught:
        parse_resource_flavor(item)
    assert caught.value.reason == reason


def test_a_list_drops_broken_items_counts_them_and_sorts_by_name() -> None:
    tally = Tally()
    items = [REAL, {"metadata": {}}, {"metadata": {"name": "a100"}, "spec": {"nodeLabels": {}}}]
    got = parse_resource_flavors(items, tally)
    assert [f.name for f in got] == ["a100", "l40s-spot"]
    assert tally.frozen() == {MISSING_FIELD: 1}


def test_the_fake_api_server_serves_a_kubernetes_list() -> None:
    handle = make_handler(CLUSTER, CLOCK)
    path = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors"
    request = FakeRequest(
        "GET", path, {"limit": ["500"]}, {"authorization": "Bearer demo-kube-api-token"}
    )
    body = json.loads(handle(request).body)
    assert (body["kind"], body["apiVersion"]) == ("ResourceFlavorList", "kueue.x-k8s.io/v1beta2")
    assert body["metadata"]["resourceVersion"]
    flavors = parse_resource_flavors(body["items"], Tally())
    assert {f.name: dict(f.node_labels) for f in flavors} == {
        "default-flavor": {},
        CLUSTER.gpu_flavor: {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
    }

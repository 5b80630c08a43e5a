"""A fake Kubernetes API server: Kueue ClusterQueues, Cohorts, ResourceFlavors; EndpointSlices.

It speaks the real shapes: `ClusterQueueList` pages with `metadata.continue` (the page size is
capped so the demo always has a second page; a bad continue token is 410 Gone), `Status`
bodies for errors, bearer-token checks (401) and an optional 403, and v1beta2 by default or
v1beta1 only (then v1beta2 paths are 404 and objects say `spec.cohort`). EndpointSlices
(`discovery.k8s.io/v1`, namespaced, selected by `kubernetes.io/service-name`) list the pods
behind a Service, for example several fake dcgm-exporters.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chargeback_demo.cluster import Cluster, Queue
from chargeback_demo.fake_workloads import local_queues, workloads
from chargeback_demo.httpfake import FakeRequest, FakeResponse, json_response
from exporter.clock import Clock

__all__ = [
    "FakeEndpoint",
    "FakeEndpointSlice",
    "cluster_queue",
    "endpoint_slice",
    "make_handler",
    "resource_flavor",
]

GROUP = "kueue.x-k8s.io"
DISCOVERY = "discovery.k8s.io"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
GPU = "nvidia.com/gpu"
CPU_FLAVOR = "default-flavor"
SERVICE_ACCOUNT = "system:serviceaccount:monitoring:gpu-chargeback-exporter"


def _status(code: int, reason: str, message: str, **details: str) -> FakeResponse:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return json_response(code, body)


def _cpu(cores: float) -> str:
    # Kueue formats cpu in milli form unless whole: "500m", "30500m", "32".
    return str(int(cores)) if cores == int(cores) else f"{round(cores * 1000)}m"


def _memory(gib: float) -> str:
    return f"{int(gib)}Gi" if gib == int(gib) else f"{round(gib * 1024)}Mi"


def _parse_cpu(text: str) -> float:
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def _parse_gib(text: str) -> float:
    return float(text[:-2]) if text.endswith("Gi") else float(text[:-2]) / 1024


def _usage(cluster: Cluster, queue: Queue, now: datetime) -> dict[str, float]:
    running = [w for w in cluster.workloads if w.queue == queue.name and w.runs_at(now)]
    return {
        "cpu": sum(w.cpu for w in running),
        "memory": sum(w.ram_gib for w in running),
        GPU: float(cluster.queue_usage(queue.name, now)),
    }


def _flavors_status(cluster: Cluster, queue: Queue, now: datetime) -> list[dict[str, Any]]:
    used = _usage(cluster, queue, now)
    nominal = {
        "cpu": _parse_cpu(queue.cpu_nominal),
        "memory": _parse_gib(queue.memory_nominal),
        GPU: float(queue.gpu_nominal),
    }
    fmt: dict[str, Callable[[float], str]] = {"cpu": _cpu, "memory": _memory, GPU: _cpu}

    def entry(resource: str) -> dict[str, str]:
        borrowed = max(0.0, used[resource] - nominal[resource])
        return {
            "name": resource,
            "total": fmt[resource](used[resource]),
            "borrowed": fmt[resource](borrowed),
        }

    return [
        {"name": CPU_FLAVOR, "resources": [entry("cpu"), entry("memory")]},
        {"name": cluster.gpu_flavor, "resources": [entry(GPU)]},
    ]


def _gpu_quota(queue: Queue, as_number: bool) -> dict[str, Any]:
    # Quantities are int-or-string in the CRD, so both come back from a real API server.
    quota: dict[str, Any] = {
        "name": GPU,
        "nominalQuota": queue.gpu_nominal if as_number else str(queue.gpu_nominal),
    }
    if queue.lending_limit is not None:
        quota["lendingLimit"] = str(queue.lending_limit)
    return quota


def cluster_queue(cluster: Cluster, queue: Queue, now: datetime, version: str) -> dict[str, Any]:
    """One ClusterQueue object as a GET in `version` returns it."""
    index = cluster.queues.index(queue)
    cohort_key = "cohortName" if version == "v1beta2" else "cohort"
    cpu_nominal: Any = int(queue.cpu_nominal) if index % 2 == 0 else queue.cpu_nominal
    status = _flavors_status(cluster, queue, now)
    running = sum(1 for w in cluster.workloads if w.queue == queue.name and w.runs_at(now))
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "ClusterQueue",
        "metadata": {
            "name": queue.name,
            "uid": f"00000000-0000-4000-8000-{index:012d}",
            "resourceVersion": str(1000 + index),
            "generation": 1,
            "creationTimestamp": "2026-01-05T09:00:00Z",
            "finalizers": [f"{GROUP}/resource-in-use"],
        },
        "spec": {
            cohort_key: cluster.cohort,
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "stopPolicy": "None",
            "flavorFungibility": {
                "whenCanBorrow": "MayStopSearch",
                "whenCanPreempt": "TryNextFlavor",
            },
            "preemption": {
                "reclaimWithinCohort": "Never",
                "withinClusterQueue": "Never",
                "borrowWithinCohort": {"policy": "Never"},
            },
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": CPU_FLAVOR,
                            "resources": [
                                {"name": "cpu", "nominalQuota": cpu_nominal},
                                {"name": "memory", "nominalQuota": queue.memory_nominal},
                            ],
                        }
                    ],
                },
                {
                    "coveredResources": [GPU],
                    "flavors": [
                        {"name": cluster.gpu_flavor, "resources": [_gpu_quota(queue, index != 1)]}
                    ],
                },
            ],
        },
        "status": {
            "pendingWorkloads": 0,
            "reservingWorkloads": running,
            "admittedWorkloads": running,
            "conditions": [
                {
                    "type": "Active",
                    "status": "True",
                    "reason": "Ready",
                    "message": "Can admit new workloads",
                    "observedGeneration": 1,
                    "lastTransitionTime": "2026-01-05T09:00:05Z",
                }
            ],
            "flavorsReservation": status,
            "flavorsUsage": status,
        },
    }


def _cohort(cluster: Cluster, version: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "Cohort",
        "metadata": {"name": cluster.cohort, "resourceVersion": "900", "generation": 1},
        "spec": {},
        "status": {},
    }


@dataclass(frozen=True)
class FakeEndpoint:
    """One pod behind a Service; `ready` None leaves the conditions out, as older servers do."""

    address: str
    node: str
    ready: bool | None = True
    terminating: bool = False


@dataclass(frozen=True)
class FakeEndpointSlice:
    """One EndpointSlice of a Service, as the EndpointSlice controller writes it."""

    namespace: str
    service: str
    port: int
    endpoints: tuple[FakeEndpoint, ...]
    port_name: str = "gpu-metrics"
    address_type: str = "IPv4"


def endpoint_slice(spec: FakeEndpointSlice, index: int, rv: str) -> dict[str, Any]:
    """A discovery.k8s.io/v1 EndpointSlice as a list item (no kind or apiVersion, like lists)."""
    endpoints = []
    for n, e in enumerate(spec.endpoints):
        entry: dict[str, Any] = {"addresses": [e.address]}
        if e.ready is not None:
            # `ready` is never true while terminating; `serving` ignores termination.
            entry["conditions"] = {
                "ready": e.ready and not e.terminating,
                "serving": e.ready,
                "terminating": e.terminating,
            }
        pod = f"nvidia-dcgm-exporter-{index}{n:04x}"
        entry["nodeName"] = e.node
        entry["targetRef"] = {"kind": "Pod", "namespace": spec.namespace, "name": pod}
        endpoints.append(entry)
    name = f"{spec.service}-{index:05x}"
    return {
        "metadata": {
            "name": name,
            "generateName": f"{spec.service}-",
            "namespace": spec.namespace,
            "resourceVersion": rv,
            "labels": {
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                SERVICE_NAME_LABEL: spec.service,
            },
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Service", "name": spec.service, "controller": True}
            ],
        },
        "addressType": spec.address_type,
        "endpoints": endpoints,
        "ports": [{"name": spec.port_name, "protocol": "TCP", "port": spec.port}],
    }


def resource_flavor(cluster: Cluster, name: str, version: str) -> dict[str, Any]:
    """A ResourceFlavor as a GET returns it; the GPU flavor selects nodes by GPU product."""
    spec: dict[str, Any] = {}
    if name == cluster.gpu_flavor:
        # GPU feature discovery's spelling of the product: DCGM's modelName with dashes.
        spec["nodeLabels"] = {"nvidia.com/gpu.product": cluster.gpu_model.replace(" ", "-")}
        spec["nodeTaints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    index = 0 if name == CPU_FLAVOR else 1
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "ResourceFlavor",
        "metadata": {
            "name": name,
            "uid": f"00000000-0000-4000-9000-{index:012d}",
            "resourceVersion": str(800 + index),
            "generation": 1,
            "creationTimestamp": "2026-01-05T08:59:00Z",
            "finalizers": [f"{GROUP}/resource-in-use"],
        },
        "spec": spec,
    }


def _token(start: int, rv: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": int(rv), "start": start})
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _start(token: str) -> int | None:
    try:
        start = json.loads(base64.urlsafe_b64decode(token.encode()))["start"]
    except (binascii.Error, ValueError, KeyError, TypeError):
        return None
    return start if isinstance(start, int) and start >= 0 else None


def _page(
    request: FakeRequest, kind: str, api: str, items: list[dict[str, Any]], cap: int, rv: str
) -> FakeResponse:
    try:
        limit = min(int(request.arg("limit") or cap), cap)
    except ValueError:
        return _status(400, "BadRequest", "invalid limit")
    start = 0
    token = request.arg("continue")
    if token:
        found = _start(token)
        if found is None or found > len(items):
            return _status(
                410,
                "Expired",
                "The provided continue parameter is too old to display a consistent list "
                "result. You can start a new list without the continue parameter.",
            )
        start = found
    chunk = items[start : start + max(limit, 1)]
    end = start + len(chunk)
    metadata: dict[str, Any] = {"resourceVersion": rv}
    if end < len(items):
        metadata["continue"] = _token(end, rv)
        metadata["remainingItemCount"] = len(items) - end
    body = {"apiVersion": api, "kind": kind, "metadata": metadata, "items": chunk}
    return json_response(200, body)


def _discovery(versions: tuple[str, ...]) -> dict[str, Any]:
    listed = [{"groupVersion": f"{GROUP}/{v}", "version": v} for v in versions]
    return {"name": GROUP, "versions": listed, "preferredVersion": listed[0]}


def make_handler(
    cluster: Cluster,
    clock: Clock,
    *,
    page_size_cap: int = 2,
    v1beta1_only: bool = False,
    token: str = "demo-kube-api-token",
    forbidden: bool = False,
    endpoint_slices: tuple[FakeEndpointSlice, ...] = (),
) -> Callable[[FakeRequest], FakeResponse]:
    """A request handler for the Kubernetes API paths the exporter reads."""
    versions = ("v1beta1",) if v1beta1_only else ("v1beta2", "v1beta1")

    def handle(request: FakeRequest) -> FakeResponse:
        if request.headers.get("authorization") != f"Bearer {token}":
            return _status(401, "Unauthorized", "Unauthorized")
        if request.method != "GET":
            return _status(405, "MethodNotAllowed", "the server does not allow this method")
        parts = request.path.strip("/").split("/")
        if parts == ["apis"]:
            return json_response(
                200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_discovery(versions)]}
            )
        if parts == ["apis", GROUP]:
            return json_response(
                200, {"kind": "APIGroup", "apiVersion": "v1", **_discovery(versions)}
            )
        if len(parts) == 4 and parts[:2] == ["apis", GROUP] and parts[2] in versions:
            return _list(request, parts[2], parts[3])
        if parts[:4] == ["apis", DISCOVERY, "v1", "namespaces"] and parts[5:] == ["endpointslices"]:
            return _slices(request, parts[4])
        return _status(404, "NotFound", "the server could not find the requested resource")

    def _list(request: FakeRequest, version: str, plural: str) -> FakeResponse:
        if plural not in ("clusterqueues", "cohorts", "resourceflavors", *_SCHEDULING):
            return _status(404, "NotFound", "the server could not find the requested resource")
        if forbidden:
            return _status(
                403,
                "Forbidden",
                f'{plural}.{GROUP} is forbidden: User "{SERVICE_ACCOUNT}" cannot list resource '
                f'"{plural}" in API group "{GROUP}" at the cluster scope',
                group=GROUP,
                kind=plural,
            )
        now = clock()
        rv = str(int(now.timestamp()))
        if plural in _SCHEDULING:
            items, kind = _SCHEDULING[plural](cluster, now, version)
            return _page(request, kind, f"{GROUP}/{version}", items, page_size_cap, rv)
        if plural == "cohorts":
            cohorts = [_cohort(cluster, version)]
            return _page(request, "CohortList", f"{GROUP}/{version}", cohorts, page_size_cap, rv)
        if plural == "resourceflavors":
            flavors = [
                resource_flavor(cluster, f, version) for f in (CPU_FLAVOR, cluster.gpu_flavor)
            ]
            return _page(
                request, "ResourceFlavorList", f"{GROUP}/{version}", flavors, page_size_cap, rv
            )
        queues = sorted(cluster.queues, key=lambda q: q.name)
        items = [cluster_queue(cluster, q, now, version) for q in queues]
        return _page(request, "ClusterQueueList", f"{GROUP}/{version}", items, page_size_cap, rv)

    def _slices(request: FakeRequest, namespace: str) -> FakeResponse:
        if forbidden:
            return _status(
                403,
                "Forbidden",
                f'endpointslices.{DISCOVERY} is forbidden: User "{SERVICE_ACCOUNT}" cannot list '
                f'resource "endpointslices" in API group "{DISCOVERY}" in the namespace '
                f'"{namespace}"',
                group=DISCOVERY,
                kind="endpointslices",
            )
        wanted = _service_selector(request.arg("labelSelector") or "")
        rv = str(int(clock().timestamp()))
        items = [
            endpoint_slice(spec, index, rv)
            for index, spec in enumerate(endpoint_slices)
            if spec.namespace == namespace and wanted in (None, spec.service)
        ]
        return _page(request, "EndpointSliceList", f"{DISCOVERY}/v1", items, page_size_cap, rv)

    return handle


_SCHEDULING: dict[str, Callable[[Cluster, datetime, str], tuple[list[dict[str, Any]], str]]] = {
    "workloads": lambda cluster, now, version: (workloads(cluster, now, version), "WorkloadList"),
    "localqueues": lambda cluster, _, version: (local_queues(cluster, version), "LocalQueueList"),
}


def _service_selector(selector: str) -> str | None:
    """The Service a `kubernetes.io/service-name=<svc>` selector names (None: no selector)."""
    for term in filter(None, (t.strip() for t in selector.split(","))):
        key, _, value = term.replace("==", "=").partition("=")
        if key == SERVICE_NAME_LABEL:
            return value
    return None

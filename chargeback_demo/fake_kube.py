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
from datetime import datetime
from typing import Any

from chargeback_demo.cluster import Cluster
from chargeback_demo.endpoint_slices import (
    DISCOVERY,
    FakeEndpointSlice,
    endpoint_slice,
    service_selector,
)
from chargeback_demo.fake_workloads import local_queues, workloads
from chargeback_demo.httpfake import FakeRequest, FakeResponse, json_response
from chargeback_demo.kueue_objects import CPU_FLAVOR, GROUP, cluster_queue, cohort, resource_flavor
from exporter.clock import Clock

__all__ = ["make_handler"]

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
            cohorts = [cohort(cluster, version)]
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
        wanted = service_selector(request.arg("labelSelector") or "")
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

"""EndpointSlices (`discovery.k8s.io/v1`) listing the pods behind a Service, as the
EndpointSlice controller writes them, and the Service a list's label selector names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "DISCOVERY",
    "FakeEndpoint",
    "FakeEndpointSlice",
    "endpoint_slice",
    "service_selector",
]

DISCOVERY = "discovery.k8s.io"
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


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


def service_selector(selector: str) -> str | None:
    """The Service a `kubernetes.io/service-name=<svc>` selector names (None: no selector)."""
    for term in filter(None, (t.strip() for t in selector.split(","))):
        key, _, value = term.replace("==", "=").partition("=")
        if key == SERVICE_NAME_LABEL:
            return value
    return None

"""A Kubernetes API server for the Kueue source's unit tests: ClusterQueue and ResourceFlavor
lists paged as the API server pages them, and the three-queue scenario worked out by hand."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from exporter.config.schema import Config, KueueConfig, SourcesConfig
from exporter.sources.kueue.flavors import FlavorRecord
from exporter.sources.kueue.source import KIND as KUEUE_KIND
from exporter.sources.kueue.source import KueueSnapshot, QuotaRecord, build_client
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW

__all__ = [
    "BASE",
    "EXPECTED",
    "EXPECTED_FLAVORS",
    "FLAVORS",
    "GPU",
    "TOKEN",
    "ApiServer",
    "GiB",
    "client_for",
    "cq",
    "fetch",
    "flavor",
    "group",
    "scenario",
    "status",
]

GiB = 2.0**30
GPU = "nvidia.com/gpu"
TOKEN = "s3cret-token-0123456789"
BASE = "/apis/kueue.x-k8s.io"


def fetch(client: httpx.Client, cfg: KueueConfig) -> KueueSnapshot:
    """The source's fetch with a config holding only this section (Kueue has no window)."""
    config = Config(sources=SourcesConfig(kueue=cfg))
    return KUEUE_KIND.fetch_from_config(client, config, Reading.open(FIXED_NOW, config.zone))


def status(code: int, reason: str, message: str) -> httpx.Response:
    """A Kubernetes Status error body, as the API server answers."""
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
    return httpx.Response(code, json={**body, "message": message, "reason": reason, "code": code})


def cq(
    name: str,
    version: str,
    cohort: str,
    groups: list[dict[str, Any]],
    usage: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A ClusterQueue object in `version` (the cohort's key differs between versions)."""
    spec: dict[str, Any] = {"resourceGroups": groups}
    if cohort:
        spec["cohortName" if version == "v1beta2" else "cohort"] = cohort
    obj: dict[str, Any] = {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": spec,
    }
    if usage is not None:
        obj["status"] = {"flavorsUsage": usage}
    return obj


def flavor(name: str, *resources: dict[str, Any]) -> dict[str, Any]:
    """A flavor entry of a resource group or of the usage status."""
    return {"name": name, "resources": list(resources)}


def group(covered: list[str], *flavors: dict[str, Any]) -> dict[str, Any]:
    """A resource group covering `covered` with its flavors."""
    return {"coveredResources": covered, "flavors": list(flavors)}


def scenario(version: str) -> list[dict[str, Any]]:
    """Three queues: numeric and string quantities, limits set and unset, one without cohort."""
    a = cq(
        "cq-a",
        version,
        "pool",
        [
            group(
                ["cpu", "memory"],
                flavor(
                    "default-flavor",
                    {"name": "cpu", "nominalQuota": 32},
                    {"name": "memory", "nominalQuota": "128Gi"},
                ),
            ),
            group([GPU], flavor("h100", {"name": GPU, "nominalQuota": 4, "borrowingLimit": "2"})),
        ],
        usage=[
            flavor(
                "default-flavor",
                {"name": "cpu", "total": "30500m", "borrowed": "0"},
                {"name": "memory", "total": "120Gi", "borrowed": "0"},
            ),
            flavor("h100", {"name": GPU, "total": "6", "borrowed": "2"}),
        ],
    )
    b = cq(
        "cq-b",
        version,
        "pool",
        [group([GPU], flavor("h100", {"name": GPU, "nominalQuota": "4", "lendingLimit": 3}))],
        usage=[flavor("h100", {"name": GPU, "total": "1"})],  # borrowed omitted: 0
    )
    c = cq(
        "cq-c",
        version,
        "",
        [group([GPU], flavor("h100", {"name": GPU, "nominalQuota": "2"}))],
        usage=[flavor("h100", {"name": GPU, "total": "2", "borrowed": "0"})],
    )
    return [a, b, c]


EXPECTED = [
    QuotaRecord("cq-a", "pool", "default-flavor", "cpu", 32.0, usage=30.5),
    QuotaRecord("cq-a", "pool", "default-flavor", "memory", 128 * GiB, usage=120 * GiB),
    QuotaRecord("cq-a", "pool", "h100", GPU, 4.0, borrowing_limit=2.0, usage=6.0, borrowed=2.0),
    QuotaRecord("cq-b", "pool", "h100", GPU, 4.0, lending_limit=3.0, usage=1.0),
    QuotaRecord("cq-c", "", "h100", GPU, 2.0, usage=2.0),
]


# One ResourceFlavor with labels, one without (a CPU flavor); items as `kubectl get -o json`
# shows them, spec before metadata.
FLAVORS: list[dict[str, Any]] = [
    {
        "spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
        "metadata": {"name": "h100", "resourceVersion": "7"},
        "kind": "ResourceFlavor",
    },
    {"spec": {}, "metadata": {"name": "default-flavor"}, "kind": "ResourceFlavor"},
]
EXPECTED_FLAVORS = (
    FlavorRecord("default-flavor"),
    FlavorRecord("h100", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}),
)


class ApiServer:
    """A MockTransport answer function that pages ClusterQueues and flavors like the API server."""

    def __init__(self, versions: tuple[str, ...], items: list[dict[str, Any]]) -> None:
        self.versions = versions
        self.lists: dict[str, list[dict[str, Any]]] = {
            "clusterqueues": items,
            "resourceflavors": FLAVORS,
        }
        self.seen: list[httpx.Request] = []
        self.expire_continue = 0

    def queue_requests(self) -> list[httpx.Request]:
        """The ClusterQueue list requests, in order."""
        return [r for r in self.seen if r.url.path.endswith("/clusterqueues")]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        _, _, _, version, plural = request.url.path.split("/")
        assert plural in self.lists
        if version not in self.versions:
            return status(404, "NotFound", "the server could not find the requested resource")
        limit = int(request.url.params["limit"])
        start = int(request.url.params.get("continue", "0") or 0)
        if start and self.expire_continue:
            self.expire_continue -= 1
            return status(410, "Expired", "The provided continue parameter is too old")
        items = self.lists[plural]
        page = items[start : start + limit]
        meta: dict[str, Any] = {"resourceVersion": "12345"}
        if start + limit < len(items):
            meta["continue"] = str(start + limit)
        kind = "ClusterQueueList" if plural == "clusterqueues" else "ResourceFlavorList"
        return httpx.Response(200, json={"kind": kind, "metadata": meta, "items": page})


def client_for(server: Callable[[httpx.Request], httpx.Response], cfg: KueueConfig) -> httpx.Client:
    """The source's own client, its transport answered by `server`."""
    return build_client(cfg, transport=httpx.MockTransport(server))

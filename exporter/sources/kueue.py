"""Kueue source: ClusterQueue quota and usage from the Kubernetes API.

Upstream: `GET /apis/kueue.x-k8s.io/<version>/clusterqueues?limit=N` (paged with
`metadata.continue`); Cohort objects are not read. `api_version: auto` reads v1beta2 and falls
back to v1beta1 when v1beta2 is not served (Kueue < v0.15), mapping `spec.cohort` to the v1beta2
`cohortName`. Records carry quantities in base units (GPUs as counts, cores, bytes); an unset
limit is +Inf, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import httpx

from exporter.config import Config, KueueConfig
from exporter.errors import (
    UpstreamPayloadError,
    UpstreamStatusError,
)
from exporter.quantity import parse_quantity
from exporter.sources.http import get_json
from exporter.sources.kind import SourceKind, section
from exporter.sources.kube_client import build_client

__all__ = [
    "KIND",
    "KueueSnapshot",
    "QuotaRecord",
    "build_client",
    "fetch",
    "parse_cluster_queue",
]

SOURCE = "kueue"
GROUP = "kueue.x-k8s.io"
_MAX_PAGES = 10_000
_T = TypeVar("_T", dict[str, Any], list[Any], str)
_RBAC = f"get/list on clusterqueues in API group {GROUP}"


@dataclass(frozen=True)
class QuotaRecord:
    """Quota of one ClusterQueue for one flavor and resource, in base units."""

    cluster_queue: str
    cohort: str  # "" when the queue is in no cohort
    flavor: str
    resource: str
    nominal: float
    borrowing_limit: float = math.inf  # unset = unlimited
    lending_limit: float = math.inf  # unset = all of the unused nominal quota
    usage: float = 0.0  # admitted workloads (status.flavorsUsage)
    borrowed: float = 0.0  # status.flavorsUsage[].resources[].borrowed


@dataclass(frozen=True)
class KueueSnapshot:
    """Every ClusterQueue quota row of one refresh."""

    queues: tuple[QuotaRecord, ...]


# --- the client ---------------------------------------------------------------------------


def fetch(client: httpx.Client, config: Config, now: datetime) -> KueueSnapshot:
    """Read every ClusterQueue (all pages) into quota records.

    The Kubernetes API answers with the current state: there is no window to ask for at `now`.
    """
    del now
    cfg = section(config.sources.kueue, SOURCE)
    version, items = _list_queues(client, cfg)
    queues = [record for item in items for record in parse_cluster_queue(item, version)]
    return KueueSnapshot(tuple(sorted(queues, key=_queue_key)))


def _list_queues(client: httpx.Client, cfg: KueueConfig) -> tuple[str, list[Any]]:
    versions = ("v1beta2", "v1beta1") if cfg.api_version == "auto" else (cfg.api_version,)
    for version in versions:
        try:
            return version, _list(client, version, "clusterqueues", cfg.page_size)
        except UpstreamStatusError as exc:
            if exc.status != 404:
                raise
            if version == versions[-1]:
                raise UpstreamStatusError(
                    f"{SOURCE}: HTTP 404 listing clusterqueues.{GROUP}/{version}: "
                    "the API server does not serve it (is Kueue installed?)",
                    404,
                ) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _list(client: httpx.Client, version: str, plural: str, page_size: int) -> list[Any]:
    path = f"/apis/{GROUP}/{version}/{plural}"
    items: list[Any] = []
    token, restarted = "", False
    for _ in range(_MAX_PAGES):
        params = {"limit": str(page_size)}
        if token:
            params["continue"] = token
        try:
            page = _get(client, path, params, plural)
        except UpstreamStatusError as exc:
            if exc.status != 410 or not token or restarted:
                raise
            # The continue token expired (etcd compaction); clients restart the list once.
            items, token, restarted = [], "", True
            continue
        if not isinstance(page, dict) or "items" not in page:
            raise UpstreamPayloadError(f"{SOURCE}: {path} did not return a Kubernetes list")
        items.extend(_array(page["items"], f"{plural} list items"))
        token = _string(_object(page.get("metadata"), "list metadata").get("continue"), "continue")
        if not token:
            return items
    raise UpstreamPayloadError(f"{SOURCE}: {path} returned more than {_MAX_PAGES} pages")


def _get(client: httpx.Client, path: str, params: Mapping[str, str], plural: str) -> Any:
    try:
        return get_json(client, SOURCE, path, params)
    except UpstreamStatusError as exc:
        if exc.status == 401:
            raise UpstreamStatusError(
                f"{SOURCE}: HTTP 401 listing {plural}.{GROUP}: the API server rejected the "
                f"bearer token; the exporter needs a valid service-account token with {_RBAC}",
                401,
            ) from None
        if exc.status == 403:
            raise UpstreamStatusError(
                f"{SOURCE}: HTTP 403 listing {plural}.{GROUP}: "
                f"the exporter's service account needs {_RBAC}",
                403,
            ) from None
        raise


# --- parsing ------------------------------------------------------------------------------


def parse_cluster_queue(item: Any, version: str = "v1beta2") -> list[QuotaRecord]:
    """One ClusterQueue object to its quota rows; a malformed object raises UpstreamPayloadError."""
    obj = _object(item, "ClusterQueue")
    name = _string(_object(obj.get("metadata"), "ClusterQueue metadata").get("name"), "name")
    if not name:
        raise UpstreamPayloadError(f"{SOURCE}: a ClusterQueue has no metadata.name")
    where = f"ClusterQueue {name!r}"
    spec = _object(obj.get("spec"), f"{where} spec")
    cohort = _string(spec.get("cohortName" if version == "v1beta2" else "cohort"), "cohort")
    status = _object(obj.get("status"), f"{where} status")
    usage = _status(status.get("flavorsUsage"), f"{where} flavorsUsage")
    out: list[QuotaRecord] = []
    for flavor, resource, limits in _quotas(spec, where):
        used, borrowed = usage.get((flavor, resource), (0.0, 0.0))
        out.append(
            QuotaRecord(name, cohort, flavor, resource, *limits, usage=used, borrowed=borrowed)
        )
    return out


def _quotas(
    spec: Mapping[str, Any], where: str
) -> list[tuple[str, str, tuple[float, float, float]]]:
    out: list[tuple[str, str, tuple[float, float, float]]] = []
    seen: set[tuple[str, str]] = set()
    for group in _array(spec.get("resourceGroups"), f"{where} resourceGroups"):
        for flavor in _array(_object(group, "resourceGroup").get("flavors"), f"{where} flavors"):
            fobj = _object(flavor, f"{where} flavor")
            fname = _string(fobj.get("name"), f"{where} flavor name")
            for res in _array(fobj.get("resources"), f"{where} flavor {fname!r} resources"):
                robj = _object(res, f"{where} resource")
                rname = _string(robj.get("name"), f"{where} resource name")
                what = f"{where} {fname}/{rname}"
                if not fname or not rname or (fname, rname) in seen:
                    raise UpstreamPayloadError(f"{SOURCE}: {what}: missing or repeated name")
                seen.add((fname, rname))
                limits = (
                    _quantity(robj.get("nominalQuota"), f"{what} nominalQuota"),
                    _limit(robj.get("borrowingLimit"), f"{what} borrowingLimit"),
                    _limit(robj.get("lendingLimit"), f"{what} lendingLimit"),
                )
                out.append((fname, rname, limits))
    return out


def _status(value: Any, where: str) -> dict[tuple[str, str], tuple[float, float]]:
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for flavor in _array(value, where):
        fobj = _object(flavor, where)
        fname = _string(fobj.get("name"), f"{where} name")
        for res in _array(fobj.get("resources"), f"{where} {fname} resources"):
            robj = _object(res, f"{where} {fname} resource")
            rname = _string(robj.get("name"), f"{where} {fname} resource name")
            what = f"{where} {fname}/{rname}"
            total = _quantity(robj.get("total", 0), f"{what} total")
            # Kueue always writes borrowed, but its docs show it omitted: missing means 0.
            borrowed = _quantity(robj.get("borrowed", 0), f"{what} borrowed")
            out[(fname, rname)] = (total, borrowed)
    return out


def _limit(value: Any, what: str) -> float:
    return math.inf if value is None else _quantity(value, what)


def _quantity(value: Any, what: str) -> float:
    try:
        return parse_quantity(value)
    except ValueError as exc:
        raise UpstreamPayloadError(f"{SOURCE}: {what}: {exc}") from None


def _typed(value: Any, kind: type[_T], what: str) -> _T:
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise UpstreamPayloadError(
            f"{SOURCE}: expected {kind.__name__} for {what}, got {type(value).__name__}"
        )
    return value


def _object(value: Any, what: str) -> dict[str, Any]:
    return _typed(value, dict, what)


def _array(value: Any, what: str) -> list[Any]:
    return _typed(value, list, what)


def _string(value: Any, what: str) -> str:
    return _typed(value, str, what)


def _queue_key(record: QuotaRecord) -> tuple[str, str, str]:
    return (record.cluster_queue, record.flavor, record.resource)


KIND = SourceKind(SOURCE, KueueSnapshot, lambda config: config.sources.kueue, build_client, fetch)

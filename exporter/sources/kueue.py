"""Kueue source: ClusterQueue quota and usage (and Cohort quota) from the Kubernetes API.

Upstream: `GET /apis/kueue.x-k8s.io/<version>/clusterqueues?limit=N` (paged with
`metadata.continue`) and `GET /apis/kueue.x-k8s.io/<version>/cohorts` (optional: 404 = none).
`api_version: auto` reads v1beta2 and falls back to v1beta1 when v1beta2 is not served
(Kueue < v0.15), mapping `spec.cohort` to the v1beta2 `cohortName`. Records carry quantities in
base units (GPUs as counts, cores, bytes); an unset limit is +Inf, never 0.
"""

from __future__ import annotations

import base64
import binascii
import math
import os
import ssl
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import yaml

from exporter.config import KueueConfig
from exporter.errors import (
    ConfigError,
    ConfigIssue,
    UpstreamPayloadError,
    UpstreamStatusError,
    UpstreamUnavailable,
)
from exporter.quantity import parse_quantity
from exporter.sources.http import get_json, make_client

__all__ = [
    "CohortQuota",
    "CohortRecord",
    "KueueSnapshot",
    "QuotaRecord",
    "build_client",
    "fetch",
    "parse_cluster_queue",
]

SOURCE = "kueue"
GROUP = "kueue.x-k8s.io"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
_MAX_PAGES = 10_000
_T = TypeVar("_T", dict[str, Any], list[Any], str)
_RBAC = f"get/list on clusterqueues and cohorts in API group {GROUP}"


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
    reserved: float = 0.0  # workloads holding a reservation (status.flavorsReservation)
    borrowed: float = 0.0  # status.flavorsUsage[].resources[].borrowed


@dataclass(frozen=True)
class CohortQuota:
    """Quota a Cohort object holds itself for one flavor and resource."""

    flavor: str
    resource: str
    nominal: float
    borrowing_limit: float = math.inf
    lending_limit: float = math.inf


@dataclass(frozen=True)
class CohortRecord:
    """A Cohort object: its parent and any quota it holds (Cohorts report no usage)."""

    name: str
    parent: str = ""
    quota: tuple[CohortQuota, ...] = ()


@dataclass(frozen=True)
class KueueSnapshot:
    """Every ClusterQueue quota row and Cohort object of one refresh."""

    queues: tuple[QuotaRecord, ...]
    cohorts: tuple[CohortRecord, ...] = ()
    api_version: str = "v1beta2"


# --- the client ---------------------------------------------------------------------------


class _Bearer(httpx.Auth):
    """Sends `Authorization: Bearer`; a token file is re-read per request (tokens rotate)."""

    def __init__(self, *, token: str | None = None, token_file: str | None = None) -> None:
        self._token = token
        self._file = token_file

    def __repr__(self) -> str:
        return "_Bearer(<redacted>)"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Attach the token to the request."""
        token = self._token
        if self._file is not None:
            try:
                token = Path(self._file).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise UpstreamUnavailable(
                    f"{SOURCE}: cannot read token file {self._file}: {exc.strerror}"
                ) from None
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        yield request


@dataclass(frozen=True)
class _Endpoint:
    """Where the API server is and how to trust it and log in to it."""

    server: str
    auth: _Bearer | None = None
    ca_file: str | None = None
    ca_data: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure: bool = False


def build_client(
    cfg: KueueConfig,
    transport: httpx.BaseTransport | None = None,
    *,
    service_account_dir: str = SERVICE_ACCOUNT_DIR,
) -> httpx.Client:
    """A client for the API server: in-cluster, from a kubeconfig, or an explicit url."""
    if cfg.in_cluster:
        endpoint = _in_cluster(service_account_dir)
    elif cfg.kubeconfig is not None:
        endpoint = _from_kubeconfig(cfg.kubeconfig)
    else:
        endpoint = _Endpoint(
            str(cfg.url),
            _Bearer(token_file=cfg.token_file) if cfg.token_file else None,
            ca_file=cfg.ca_file,
        )
    if transport is None and endpoint.server.startswith("https://"):
        transport = httpx.HTTPTransport(verify=_tls(endpoint, cfg.insecure_skip_tls_verify))
    client = make_client(endpoint.server, cfg.timeout, transport=transport)
    if endpoint.auth is not None:
        client.auth = endpoint.auth
    return client


def _in_cluster(sa_dir: str) -> _Endpoint:
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        issue = ConfigIssue(None, "sources.kueue.in_cluster", "KUBERNETES_SERVICE_HOST is unset")
        raise ConfigError(sa_dir, [issue])
    host = f"[{host}]" if ":" in host else host  # an IPv6 service address
    return _Endpoint(
        f"https://{host}:{port}",
        _Bearer(token_file=os.path.join(sa_dir, "token")),
        ca_file=os.path.join(sa_dir, "ca.crt"),
    )


def _from_kubeconfig(path: str) -> _Endpoint:
    def bad(key: str, message: str) -> ConfigError:
        return ConfigError(path, [ConfigIssue(None, key, message)])

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise bad("", f"cannot read kubeconfig: {exc}") from None
    if not isinstance(data, dict):
        raise bad("", "not a kubeconfig")
    context = _named(data, "contexts", "context", str(data.get("current-context", "")), bad)
    cluster = _named(data, "clusters", "cluster", str(context.get("cluster", "")), bad)
    user = (
        _named(data, "users", "user", str(context.get("user", "")), bad)
        if context.get("user")
        else {}
    )
    unsupported = {"exec", "auth-provider", "client-certificate-data", "client-key-data"} & set(
        user
    )
    if unsupported:
        raise bad("users.user", f"{', '.join(sorted(unsupported))}: not supported; use a token")
    base = Path(path).parent

    def rel(value: Any) -> str | None:
        return str(base / str(value)) if value else None

    try:
        return _Endpoint(
            str(cluster.get("server", "")).rstrip("/"),
            _user_auth(user, rel),
            ca_file=rel(cluster.get("certificate-authority")),
            ca_data=_b64(cluster.get("certificate-authority-data")).decode() or None,
            cert_file=rel(user.get("client-certificate")),
            key_file=rel(user.get("client-key")),
            insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        )
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise bad("clusters/users", f"bad base64 data: {exc}") from None


def _named(
    data: Mapping[str, Any],
    section: str,
    kind: str,
    name: str,
    bad: Callable[[str, str], ConfigError],
) -> dict[str, Any]:
    for entry in data.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            inner = entry.get(kind)
            if isinstance(inner, dict):
                return inner
    raise bad(section, f"no {kind} named {name!r}")


def _user_auth(user: Mapping[str, Any], rel: Callable[[Any], str | None]) -> _Bearer | None:
    if user.get("token"):
        return _Bearer(token=str(user["token"]))
    if user.get("tokenFile"):
        return _Bearer(token_file=rel(user["tokenFile"]))
    return None


def _b64(value: Any) -> bytes:
    return base64.b64decode(str(value), validate=True) if value else b""


def _tls(endpoint: _Endpoint, insecure: bool) -> ssl.SSLContext | bool:
    if insecure or endpoint.insecure:
        return False
    try:
        context = ssl.create_default_context(cafile=endpoint.ca_file, cadata=endpoint.ca_data)
        if endpoint.cert_file and endpoint.key_file:
            context.load_cert_chain(endpoint.cert_file, endpoint.key_file)
    except OSError as exc:  # ssl.SSLError included
        issue = ConfigIssue(None, "sources.kueue", f"cannot load TLS files: {exc}")
        raise ConfigError(endpoint.ca_file or endpoint.server, [issue]) from None
    return context


# --- fetching -----------------------------------------------------------------------------


def fetch(client: httpx.Client, cfg: KueueConfig) -> KueueSnapshot:
    """Read every ClusterQueue (all pages) and the Cohort objects into quota records."""
    version, items = _list_queues(client, cfg)
    queues = [record for item in items for record in parse_cluster_queue(item, version)]
    try:
        cohort_items = _list(client, version, "cohorts", cfg.page_size)
    except UpstreamStatusError as exc:
        if exc.status != 404:
            raise
        cohort_items = []  # Cohort objects are optional; implicit cohorts have none
    cohorts = [_cohort(item) for item in cohort_items]
    return KueueSnapshot(
        tuple(sorted(queues, key=_queue_key)), tuple(sorted(cohorts, key=lambda c: c.name)), version
    )


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
    reserved = _status(status.get("flavorsReservation"), f"{where} flavorsReservation")
    out: list[QuotaRecord] = []
    for flavor, resource, limits in _quotas(spec, where):
        used, borrowed = usage.get((flavor, resource), (0.0, 0.0))
        out.append(
            QuotaRecord(
                name,
                cohort,
                flavor,
                resource,
                *limits,
                usage=used,
                reserved=reserved.get((flavor, resource), (0.0, 0.0))[0],
                borrowed=borrowed,
            )
        )
    return out


def _cohort(item: Any) -> CohortRecord:
    obj = _object(item, "Cohort")
    name = _string(_object(obj.get("metadata"), "Cohort metadata").get("name"), "name")
    spec = _object(obj.get("spec"), f"Cohort {name!r} spec")
    # v1beta2 says parentName; the oldest Cohort versions said parent.
    parent = _string(spec.get("parentName", spec.get("parent")), "parentName")
    quota = [CohortQuota(f, r, *limits) for f, r, limits in _quotas(spec, f"Cohort {name!r}")]
    return CohortRecord(name, parent, tuple(quota))


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

"""DCGM discovery: the ready endpoints of dcgm-exporter's Service, from its EndpointSlices.

Upstream: `GET /apis/discovery.k8s.io/v1/namespaces/<ns>/endpointslices?labelSelector=
kubernetes.io/service-name=<svc>&limit=N` (paged with `metadata.continue`), then `GET` every
ready endpoint's `/metrics`, at most `concurrency` at once, each within its own call deadline,
and read it into records there (scrape_all, which listed urls use too).

EndpointSlice rules (discovery.k8s.io/v1 EndpointConditions): `ready` absent (null) means
ready; `ready: false` is skipped and counted, whatever `serving` says, as a terminating
exporter pod is on its way out. An endpoint's `addresses` are fungible: the first is used. The
same address and port in two slices (slices are rewritten apart, so a moving endpoint can sit
in both for a moment) is scraped once. The port is the one named `port` in the slice's `ports`;
a slice without it is skipped (it is not this Service's metrics port).
"""

from __future__ import annotations

import contextvars
import queue
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from exporter.config.schema import DcgmConfig, DcgmDiscovery, KueueConfig
from exporter.errors import (
    ConfigError,
    UpstreamError,
    UpstreamIncomplete,
    UpstreamPayloadError,
    UpstreamStatusError,
)
from exporter.sources import kube_client
from exporter.sources.checks import Tally
from exporter.sources.clients import KEEP_ALIVE, USER_AGENT, lanes_like, sending, tls_context
from exporter.sources.dcgm.lanes import Scraper, go_light, scrapers
from exporter.sources.dcgm.parse import Shape, parse_metrics
from exporter.sources.dcgm.records import GpuRecord
from exporter.sources.http import get_json

__all__ = [
    "DiscoveryClient",
    "Endpoint",
    "Scrape",
    "build_client",
    "list_endpoints",
    "parse_slices",
    "scrape_all",
]

SOURCE = "dcgm"
GROUP = "discovery.k8s.io"
SERVICE_LABEL = "kubernetes.io/service-name"
_MAX_PAGES = 1000  # a list that never ends must not make endless requests
_MAX_CONNECT = 5.0  # seconds, as every other source connects
_RBAC = f"list on endpointslices in API group {GROUP} in the Service's namespace"


class DiscoveryClient(httpx.Client):
    """The client for dcgm-exporter's endpoints, carrying the API server's client beside it.

    Two clients, because the service-account token must never reach a node's exporter.
    """

    def __init__(
        self, kube: httpx.Client, cfg: DcgmConfig, transport: httpx.BaseTransport | None = None
    ) -> None:
        seconds = cfg.timeout.total_seconds()
        verify = tls_context(cfg.ca_file) if cfg.ca_file else True
        through = sending(verify, KEEP_ALIVE, transport)
        super().__init__(
            transport=through.transport,
            mounts=through.mounts,
            timeout=httpx.Timeout(seconds, connect=min(seconds, _MAX_CONNECT)),
            headers={"User-Agent": USER_AGENT},
        )
        lanes_like(self, cfg.timeout, verify, transport)
        if transport is None:
            go_light(self, cfg.timeout, verify, follow_redirects=False)
        self.kube = kube

    def close(self) -> None:
        """Close both clients."""
        self.kube.close()
        super().close()


def build_client(cfg: DcgmConfig, discovery: DcgmDiscovery) -> DiscoveryClient:
    """The endpoints' client (no base URL, no credentials) with the API server's inside."""
    # The Kubernetes client is the Kueue source's: token re-read per request, kubeconfig, TLS.
    access = KueueConfig(
        url=discovery.url,
        token_file=discovery.token_file,
        kubeconfig=discovery.kubeconfig,
        in_cluster=discovery.in_cluster,
        insecure_skip_tls_verify=discovery.insecure_skip_tls_verify,
        ca_file=discovery.ca_file,
        timeout=cfg.timeout,
    )
    try:
        kube = kube_client.build_client(access)
    except ConfigError as exc:
        # The Kubernetes client names the Kueue section it was written for; these are ours.
        issues = [replace(i, key=_our_key(i.key)) for i in exc.issues]
        raise ConfigError(exc.path, issues) from None
    return DiscoveryClient(kube, cfg)


def _our_key(key: str) -> str:
    return "sources.dcgm.discovery" + key.removeprefix("sources.kueue") if key else key


@dataclass(frozen=True)
class Endpoint:
    """One ready dcgm-exporter pod: the URL of its metrics and the node it runs on."""

    url: str
    node: str


@dataclass(frozen=True)
class Endpoints:
    """What the Service's slices list: the ready endpoints and how many were not ready."""

    ready: tuple[Endpoint, ...]
    not_ready: int


@dataclass(frozen=True)
class Scrape:
    """One endpoint's records, what it dropped and its shape, or the error that stopped it."""

    endpoint: Endpoint
    records: list[GpuRecord] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    error: UpstreamError | None = None
    shape: Shape = field(default_factory=set)  # the body's (GPU, field) pairs


def list_endpoints(kube: httpx.Client, discovery: DcgmDiscovery) -> Endpoints:
    """Every ready endpoint of the Service, from all pages of its EndpointSlices."""
    return parse_slices(_list_slices(kube, discovery), discovery)


def _list_slices(kube: httpx.Client, d: DcgmDiscovery) -> list[Any]:
    path = f"/apis/{GROUP}/v1/namespaces/{d.namespace}/endpointslices"
    items: list[Any] = []
    token, restarted = "", False
    for _ in range(_MAX_PAGES):
        params = {"labelSelector": f"{SERVICE_LABEL}={d.service}", "limit": str(d.page_size)}
        if token:
            params["continue"] = token
        try:
            page = _get(kube, path, params, d)
        except UpstreamStatusError as exc:
            if exc.status != 410 or not token or restarted:
                raise
            # The continue token expired (etcd compaction): list again from the start, once.
            items, token, restarted = [], "", True
            continue
        chunk, token = _page(page, path)
        items.extend(chunk)
        if not token:
            return items
    raise UpstreamIncomplete(f"{SOURCE}: {path} returned more than {_MAX_PAGES} pages")


def _get(kube: httpx.Client, path: str, params: Mapping[str, str], d: DcgmDiscovery) -> Any:
    try:
        return get_json(kube, SOURCE, path, params)
    except UpstreamStatusError as exc:
        if exc.status in (401, 403):
            raise UpstreamStatusError(
                f"{SOURCE}: HTTP {exc.status} listing endpointslices in namespace "
                f"{d.namespace!r}: the exporter's service account needs {_RBAC}",
                exc.status,
            ) from None
        raise


def _page(page: Any, path: str) -> tuple[list[Any], str]:
    if not isinstance(page, dict) or not isinstance(page.get("items"), list):
        raise UpstreamPayloadError(f"{SOURCE}: {path} did not return a Kubernetes list")
    meta = page.get("metadata") or {}
    token = meta.get("continue", "") if isinstance(meta, dict) else None
    if not isinstance(token, str):
        raise UpstreamPayloadError(f"{SOURCE}: {path}: list metadata.continue is not a string")
    return page["items"], token


def parse_slices(slices: list[Any], d: DcgmDiscovery) -> Endpoints:
    """The ready endpoints of a list of EndpointSlice objects, each address and port once."""
    ready: dict[str, Endpoint] = {}
    not_ready: set[str] = set()
    for item in slices:
        where = _slice_name(item)
        if not isinstance(item, dict):
            raise UpstreamPayloadError(f"{SOURCE}: EndpointSlice {where} is not an object")
        port = _port(item.get("ports"), d.port, where)
        if port is None:
            continue
        family = item.get("addressType")
        for entry in _list(item.get("endpoints"), f"EndpointSlice {where} endpoints"):
            endpoint = _endpoint(entry, family, port, d, where)
            if endpoint is None:
                continue
            if _is_ready(entry, where):
                ready.setdefault(endpoint.url, endpoint)
            else:
                not_ready.add(endpoint.url)
    # An address ready in one slice and not in another is mid-move: the ready copy counts.
    return Endpoints(tuple(ready[url] for url in sorted(ready)), len(not_ready - set(ready)))


def _slice_name(item: Any) -> str:
    meta = item.get("metadata") if isinstance(item, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return repr(name) if isinstance(name, str) else "(unnamed)"


def _list(value: Any, what: str) -> list[Any]:
    if value is None:  # omitempty: a slice with no endpoints has no `endpoints` key
        return []
    if not isinstance(value, list):
        raise UpstreamPayloadError(f"{SOURCE}: {what} is not a list")
    return value


def _port(ports: Any, wanted: str, where: str) -> int | None:
    for entry in _list(ports, f"EndpointSlice {where} ports"):
        if not isinstance(entry, dict):
            raise UpstreamPayloadError(f"{SOURCE}: EndpointSlice {where}: a port is not an object")
        number = entry.get("port")
        named = entry.get("name") or ""  # an unnamed port has name "" or none at all
        if named == wanted or (wanted.isdigit() and number == int(wanted)):
            if isinstance(number, bool) or not isinstance(number, int) or not 0 < number < 65536:
                # A null port means "all ports": nothing to scrape a metrics endpoint on.
                return None
            return number
    return None


def _endpoint(entry: Any, family: Any, port: int, d: DcgmDiscovery, where: str) -> Endpoint | None:
    if not isinstance(entry, dict):
        raise UpstreamPayloadError(f"{SOURCE}: EndpointSlice {where}: an endpoint is not an object")
    addresses = _list(entry.get("addresses"), f"EndpointSlice {where} addresses")
    if not addresses or not isinstance(addresses[0], str) or not addresses[0]:
        return None
    host = f"[{addresses[0]}]" if family == "IPv6" or ":" in addresses[0] else addresses[0]
    node = entry.get("nodeName")
    name = node if isinstance(node, str) and node else addresses[0]
    return Endpoint(f"{d.scheme}://{host}:{port}{d.path}", name)


def _is_ready(entry: Mapping[str, Any], where: str) -> bool:
    conditions = entry.get("conditions") or {}
    if not isinstance(conditions, dict):
        raise UpstreamPayloadError(f"{SOURCE}: EndpointSlice {where}: conditions is not an object")
    ready = conditions.get("ready")
    return ready is None or ready is True


@contextmanager
def scrape_all(
    client: httpx.Client, endpoints: Sequence[Endpoint], concurrency: int
) -> Iterator[Iterator[Scrape]]:
    """GET and read every endpoint, `concurrency` at once; the answers come in their order.

    One failure does not stop the others. Each call runs in a copy of the caller's context,
    so it keeps the refresh's deadline: its own call deadline, cut to what is left of the
    refresh's. Leaving the block early cancels the calls not yet begun.
    """
    workers = max(1, min(concurrency, len(endpoints)))
    with (
        scrapers(client, [e.url for e in endpoints], workers) as free,
        ThreadPoolExecutor(workers, thread_name_prefix="dcgm-scrape") as pool,
    ):
        futures = [pool.submit(contextvars.copy_context().run, _caller(free, e)) for e in endpoints]
        try:
            yield (future.result() for future in futures)
        finally:
            for future in futures:
                future.cancel()


def _caller(free: queue.SimpleQueue[Scraper], endpoint: Endpoint) -> Callable[[], Scrape]:
    def call() -> Scrape:
        tally = Tally()
        shape: Shape = set()
        scrape = free.get()  # a lane of its own while it calls (there is one per worker)
        try:
            text = scrape(endpoint.url)
            # Read here, by the call's own thread, so its body is dropped once parsed rather
            # than held until every endpoint ahead of it in the list has been read.
            where, node = endpoint.url, endpoint.node
            records = parse_metrics(text, default_node=node, where=where, tally=tally, shape=shape)
        except UpstreamError as exc:
            return Scrape(endpoint, error=exc)
        finally:
            free.put(scrape)
        return Scrape(endpoint, records, tally, shape=shape)

    return call

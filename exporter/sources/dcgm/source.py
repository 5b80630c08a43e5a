"""DCGM source: dcgm-exporter's GPUs, one record per GPU or MIG instance, read one of three ways.

Upstream, exactly one of: `GET <url>` for every url in `sources.dcgm.urls`, `concurrency` at
once, each within its own call deadline; every ready endpoint of dcgm-exporter's Service,
found through its EndpointSlices (`discovery`, see dcgm_discovery); or the Prometheus that
scrapes it (`prometheus`, see dcgm_prometheus). The
text is read by dcgm_text (prometheus_client's parser for any body off its plain path) and
turned into records by dcgm_parse. A record names the node, the GPU, the pod holding it (if
any) and its utilisation; it knows nothing about teams.

Rules (see docs/sources/dcgm.md):

- utilisation is `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (a 0..1 ratio, also reported per MIG instance)
  when present, else `DCGM_FI_DEV_GPU_UTIL / 100` (a percent, never reported for MIG); it is
  dcgm-exporter's own average over its collect interval (30 s by default);
- a MIG instance weighs `<n>g / slices` of its GPU (7 compute slices; 4 on an A30 or an RTX PRO
  6000 Blackwell); a GPU in MIG mode is represented by its instances only, plus one unallocated
  record for the slices no instance holds, so its records always add up to exactly one GPU; a GPU
  whose instances claim more slices than it has is dropped and counted;
- a GPU or instance reported for several pods (time-slicing) is split evenly among them, so the
  GPU count never exceeds the hardware;
- each endpoint is judged on its own (dcgm_endpoints): a body cut short, or smaller than the
  endpoint's last good read, fails that endpoint's read; a failed endpoint's last good read
  (no older than `max_staleness`) stands in, its GPUs counted with their pods and every sample
  unknown. With listed `urls` (the whole fleet by definition) an endpoint failed without one
  fails the refresh, as does every endpoint failing; with `discovery` it is counted and left
  out (see fetch_discovered); `prometheus` reads the stored series instead (dcgm_prometheus);
- a corrupt utilisation sample (4294967295, NaN, out of range) is counted as dropped and leaves
  its GPU counted with its pod: the GPU's last good utilisation, from a read of this process no
  older than `max_staleness`, stands in for it, else its utilisation is unknown for that
  refresh; an endpoint whose every sample is corrupt is so many corrupt samples, and only a
  refresh without one usable sample anywhere fails;
- a GPU that cannot be read at all (a `<<<NULL>>>` MIG profile, instances claiming more slices
  than the GPU has) is dropped and counted, and fails the read, since every count would miss
  it; the same GPU behind two URLs counts once, and two different descriptions of it fail the
  refresh.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import httpx

from exporter.config.schema import (
    Config,
    DcgmConfig,
    DcgmDiscovery,
    DcgmPrometheus,
    format_duration,
)
from exporter.errors import RecordsDropped, UpstreamError, UpstreamIncomplete
from exporter.redact import redact
from exporter.sources.checks import Tally
from exporter.sources.clients import make_client, tls_context
from exporter.sources.dcgm import discovery as dcgm_discovery
from exporter.sources.dcgm import endpoints as dcgm_endpoints
from exporter.sources.dcgm import idle as dcgm_idle
from exporter.sources.dcgm import lanes as dcgm_lanes
from exporter.sources.dcgm import prometheus as dcgm_prometheus
from exporter.sources.dcgm.mig import mig_share, mig_slices
from exporter.sources.dcgm.parse import parse_metrics, parse_series
from exporter.sources.dcgm.records import (
    UNSLICED,
    DcgmSnapshot,
    GpuRecord,
    identity,
    snapshot,
)
from exporter.sources.kind import SourceKind
from exporter.sources.reading import Reading

__all__ = [
    "KIND",
    "UNSLICED",
    "DcgmShared",
    "DcgmSnapshot",
    "GpuRecord",
    "build_client",
    "fetch",
    "fetch_discovered",
    "fetch_prometheus",
    "fetch_urls",
    "mig_share",
    "mig_slices",
    "parse_metrics",
    "parse_series",
    "shared_settings",
]

SOURCE = "dcgm"
_DEFAULT_WINDOW = timedelta(hours=1)  # OpenCost's default rate window, when it is not read
log = logging.getLogger(__name__)


def build_client(cfg: DcgmConfig, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """A client for the configured mode: full URLs, discovered endpoints, or Prometheus."""
    if cfg.discovery is not None:
        return dcgm_discovery.build_client(cfg, cfg.discovery)
    if cfg.prometheus is not None:
        base = cfg.prometheus.url.rstrip("/")
        return make_client(base, cfg.timeout, ca_file=cfg.ca_file, transport=transport)
    verify = tls_context(cfg.ca_file) if cfg.ca_file else True
    client = make_client("", cfg.timeout, verify=verify, transport=transport)
    if transport is None:
        dcgm_lanes.go_light(client, cfg.timeout, verify, follow_redirects=True)
    return client


@dataclass(frozen=True)
class DcgmShared:
    """What the DCGM source reads from outside `sources.dcgm`, for its Prometheus mode."""

    # The window costs are read over (OpenCost's rate_window, its default without OpenCost):
    # utilisation is read over the same one unless `prometheus.window` sets its own.
    cost_window: timedelta
    # The team label keys, then the fallback ones: the pod labels utilisation is grouped by.
    label_keys: tuple[str, ...]


def shared_settings(config: Config) -> DcgmShared:
    """The DCGM source's shared settings, built once by the wiring."""
    opencost = config.sources.opencost
    attribution = config.attribution
    return DcgmShared(
        cost_window=opencost.rate_window if opencost is not None else _DEFAULT_WINDOW,
        label_keys=(*attribution.team_label_keys, *attribution.fallback_label_keys),
    )


def fetch(
    client: httpx.Client, cfg: DcgmConfig, shared: DcgmShared, reading: Reading
) -> DcgmSnapshot:
    """Read every GPU the configured mode can see.

    dcgm-exporter answers with its current state; only the Prometheus mode reads a window,
    the one ending at the reading's instant, and the month's idle GPU-hours up to it (idle).
    """
    if cfg.prometheus is not None:
        read = fetch_prometheus(client, cfg, cfg.prometheus, shared, reading)
    elif cfg.discovery is not None:
        if not isinstance(client, dcgm_discovery.DiscoveryClient):
            raise TypeError("sources.dcgm.discovery needs the client build_client makes")
        read = fetch_discovered(client, cfg.discovery, reading.at, cfg.max_staleness)
    else:
        read = fetch_urls(client, cfg.urls or (), cfg.concurrency, reading.at, cfg.max_staleness)
    _refuse_without_one_sample(read)
    return _with_known_use(client, read, reading.at, cfg.max_staleness)


def _refuse_without_one_sample(read: DcgmSnapshot) -> None:
    """Not one usable utilisation sample in the whole refresh: an exporter fleet this broken says
    nothing about any GPU's use. One endpoint all corrupt is only its GPUs' use unknown."""
    corrupt = Counter(r.corrupt for r in read.gpus if r.corrupt)
    if corrupt and all(r.utilisation is None for r in read.gpus):
        message = f"{SOURCE}: every utilisation sample was corrupt ({dict(corrupt)})"
        raise RecordsDropped(message, corrupt)


# Each client's last good utilisation per GPU (and pod), with when it was read: the refresher
# keeps one client per source for the process's life.
_Known = dict[tuple[str, ...], tuple[datetime, float]]
_KNOWN: weakref.WeakKeyDictionary[httpx.Client, _Known] = weakref.WeakKeyDictionary()
_KNOWN_LOCK = threading.Lock()


def _with_known_use(
    client: httpx.Client, read: DcgmSnapshot, at: datetime, max_age: timedelta
) -> DcgmSnapshot:
    """A GPU whose sample was corrupt takes its last good utilisation, if still fresh.

    The figures it feeds (its team's utilisation, busy or idle, waste) then stay the last
    complete ones rather than move; a value is only ever read from a sample that was good.
    """
    with _KNOWN_LOCK:
        known = _KNOWN.setdefault(client, {})
        for key in [k for k, (when, _) in known.items() if not timedelta() <= at - when <= max_age]:
            del known[key]
        gpus = []
        for record in read.gpus:
            key = identity(record)
            if record.corrupt and key in known:
                record = replace(record, utilisation=known[key][1])
            elif record.utilisation is not None and not record.corrupt:
                known[key] = (at, record.utilisation)
            gpus.append(record)
    return replace(read, gpus=tuple(gpus))


def fetch_urls(
    client: httpx.Client,
    urls: Sequence[str],
    concurrency: int,
    at: datetime | None = None,
    max_age: timedelta = timedelta(),
) -> DcgmSnapshot:
    """Scrape every listed URL, `concurrency` at once; a failed one stands in from its last
    good read (at `at`, no older than `max_age`), else fails the refresh.

    The error raised is the first in the list's order, naming its URL, so the same fleet
    fails the same way whichever answer came first.
    """
    endpoints = [dcgm_discovery.Endpoint(url, urlsplit(url).hostname or url) for url in urls]
    with dcgm_discovery.scrape_all(client, endpoints, concurrency) as scrapes:
        read = _gather(client, scrapes, at, max_age)
    if read.unplaced or len(read.failed) == len(endpoints):
        endpoint, error = (read.unplaced or read.failed)[0]
        raise _naming(error, endpoint.url) from None
    counts = {"scraped": len(endpoints) - len(read.failed), "failed": len(read.failed)}
    return replace(snapshot(read.records, read.tally), endpoints=counts)


@dataclass
class _Gathered:
    """Every endpoint's records (a failed one's stand-ins), and the endpoints that failed."""

    records: list[GpuRecord]
    tally: Tally
    failed: list[tuple[dcgm_discovery.Endpoint, UpstreamError]]
    unplaced: list[tuple[dcgm_discovery.Endpoint, UpstreamError]]  # failed, nothing stands in


def _gather(
    client: httpx.Client,
    scrapes: Iterator[dcgm_discovery.Scrape],
    at: datetime | None,
    max_age: timedelta,
) -> _Gathered:
    memory = dcgm_endpoints.memory_of(client)
    if at is not None:
        memory.forget_before(at - max_age)
    out = _Gathered([], Tally(), [], [])
    for scrape in scrapes:
        url, error = scrape.endpoint.url, scrape.error
        if error is None and at is not None:
            try:
                memory.accept(url, scrape.records, scrape.shape, at)
            except UpstreamIncomplete as exc:
                error = exc
        if error is None:
            out.records.extend(scrape.records)
            out.tally.add(scrape.tally)
            continue
        out.failed.append((scrape.endpoint, error))
        stand_in = memory.stand_in(url, at, max_age) if at is not None else None
        if stand_in is None:
            out.unplaced.append((scrape.endpoint, error))
        else:
            log.warning("%s endpoint failed, its last good GPUs stand in: %s", SOURCE, error)
            out.records.extend(stand_in)
    return out


def _naming(error: UpstreamError, url: str) -> UpstreamError:
    # The same error (class, reason, status), its message naming the endpoint that failed.
    if url in str(error):
        return error  # a payload error names it already
    named = type(error).__new__(type(error))
    named.__dict__.update(vars(error))
    detail = str(error).removeprefix(f"{SOURCE}: ")
    named.args = (redact(f"{SOURCE}: {url}: {detail}"),)
    return named


def fetch_discovered(
    client: dcgm_discovery.DiscoveryClient,
    discovery: DcgmDiscovery,
    at: datetime | None = None,
    max_age: timedelta = timedelta(),
) -> DcgmSnapshot:
    """Scrape every ready endpoint of the Service; a failed endpoint is counted, not fatal.

    Why publishing the others is right: every GPU family is a sum or mean over GPUs that were
    read, each GPU's numbers come whole from its own node, and no figure divides by a fleet
    total; so the figures stay right for the GPUs they cover, and the missing node's GPUs are
    declared by `chargeback_source_endpoints{state="failed"}` rather than silently absent. A
    failed endpoint read well before (at `at`, no older than `max_age`) stands in with its
    GPUs' samples unknown, as with listed urls. The refresh does fail (the last good snapshot is
    kept) when no ready endpoint answered, or none is listed: that would read as a cluster
    without GPUs.
    """
    found = dcgm_discovery.list_endpoints(client.kube, discovery)
    with dcgm_discovery.scrape_all(client, found.ready, discovery.concurrency) as scrapes:
        read = _gather(client, scrapes, at, max_age)
    if not found.ready:
        raise UpstreamIncomplete(
            f"{SOURCE}: Service {discovery.namespace}/{discovery.service} has no ready endpoint "
            f"on port {discovery.port!r} ({found.not_ready} not ready)"
        )
    failed = [f"{endpoint.node}: {error}" for endpoint, error in read.failed]
    if len(failed) == len(found.ready):
        raise UpstreamIncomplete(f"{SOURCE}: every endpoint failed; first: {failed[0]}")
    for endpoint, error in read.unplaced:
        log.warning(
            "%s endpoint failed, its GPUs are left out: %s: %s", SOURCE, endpoint.node, error
        )
    counts = {
        "scraped": len(found.ready) - len(failed),
        "failed": len(failed),
        "not_ready": found.not_ready,
    }
    return replace(snapshot(read.records, read.tally), endpoints=counts)


def fetch_prometheus(
    client: httpx.Client,
    dcgm: DcgmConfig,
    cfg: DcgmPrometheus,
    shared: DcgmShared,
    reading: Reading,
) -> DcgmSnapshot:
    """Utilisation over the cost's window and the month's idle GPU-hours, from Prometheus."""
    window = cfg.window if cfg.window is not None else shared.cost_window
    labels = dcgm_prometheus.group_labels(cfg, shared.label_keys)
    now = reading.at
    series = dcgm_prometheus.read_series(client, window, labels, now)
    tally = Tally()
    where = f"{cfg.url} over {format_duration(window)}"
    records = parse_series(series, where=where, tally=tally) if series else []
    if not records:
        raise UpstreamIncomplete(f"{SOURCE}: {where}: no DCGM utilisation series with a gpu label")
    span = (reading.month.start, now)
    idle = dcgm_idle.read_idle_hours(client, labels, dcgm.idle_threshold, cfg.step, span, tally)
    return replace(snapshot(records, tally), idle_hours=idle)


KIND = SourceKind(
    SOURCE, DcgmSnapshot, lambda config: config.sources.dcgm, shared_settings, build_client, fetch
)

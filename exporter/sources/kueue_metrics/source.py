"""Kueue metrics source: Kueue's own series from the Prometheus that scrapes it.

Upstream: `GET <url>/api/v1/query` (exporter.sources.prometheus_api), one instant query per part
(exporter.sources.kueue_metrics.metrics), counters over the month read so far. A part without
series is missing and the rest kept; a Prometheus that answers no part fails the refresh, and
`chargeback_source_up{source="kueue_metrics"}` says so while the Kueue quota keeps serving.
"""

from __future__ import annotations

import httpx

from exporter.config.schema import KueueMetricsConfig
from exporter.sources.clients import make_client
from exporter.sources.kind import SourceKind, nothing_shared
from exporter.sources.kueue_metrics.metrics import SOURCE, fetch_kueue_metrics
from exporter.sources.kueue_metrics.records import KueueMetrics
from exporter.sources.reading import Reading

__all__ = ["KIND", "KueueMetrics", "build_client", "fetch"]


def build_client(
    cfg: KueueMetricsConfig, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    """A client for the Prometheus API."""
    return make_client(cfg.url.rstrip("/"), cfg.timeout, ca_file=cfg.ca_file, transport=transport)


def fetch(
    client: httpx.Client, cfg: KueueMetricsConfig, shared: None, reading: Reading
) -> KueueMetrics:
    """Every part at the reading's instant, counters over the month up to it."""
    del cfg, shared
    seconds = round(reading.until.timestamp() - reading.month.start.timestamp())
    return fetch_kueue_metrics(client, reading.at, seconds)


KIND = SourceKind(
    SOURCE,
    KueueMetrics,
    lambda config: config.sources.kueue_metrics,
    nothing_shared,
    build_client,
    fetch,
)

"""The history window as a source of its own: slow refresh, own deadline, own `source_up`.

It reads the Prometheus of `sources.dcgm.prometheus` (DCGM's series) and, when set, the one
of `report.prometheus` (the exporter's quota series), every `advice.interval` (an hour by
default), over `advice.window` ending at the refresh. A failure marks `source_up{source=
"advice"}` 0 and leaves every other source serving.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import httpx

from exporter.config.advice import AdviceConfig
from exporter.config.schema import Config, DcgmPrometheus, ReportPrometheus
from exporter.sources.checks import Tally
from exporter.sources.clients import make_client
from exporter.sources.dcgm.prometheus import group_labels
from exporter.sources.dcgm_history.read import prometheus_query, read_devices, read_queues
from exporter.sources.dcgm_history.records import History
from exporter.sources.deadline import RetryPolicy
from exporter.sources.kind import SourceKind
from exporter.sources.readers import SourceReader
from exporter.sources.reading import Reading
from exporter.sources.report_prometheus import open_client

__all__ = ["SOURCE", "AdviceShared", "fetch", "open_reader"]

SOURCE = "advice"


@dataclass(frozen=True)
class AdviceShared:
    """What the history read takes from outside `advice:`."""

    dcgm: DcgmPrometheus
    idle_threshold: float
    label_keys: tuple[str, ...]
    report: ReportPrometheus | None
    quota_client: Callable[[], httpx.Client] | None  # opens the client of `report`


def shared_settings(config: Config, config_path: str) -> AdviceShared:
    """The history read's shared settings, built once by the wiring."""
    dcgm = config.sources.dcgm
    if dcgm is None or dcgm.prometheus is None:  # the config refuses this already
        raise ValueError("advice needs sources.dcgm.prometheus")
    report = config.report.prometheus
    attribution = config.attribution
    return AdviceShared(
        dcgm.prometheus,
        dcgm.idle_threshold,
        (*attribution.team_label_keys, *attribution.fallback_label_keys),
        report,
        partial(open_client, report, config_path) if report is not None else None,
    )


def fetch(
    client: httpx.Client, cfg: AdviceConfig, shared: AdviceShared, reading: Reading
) -> History:
    """The window ending at the reading's instant: devices from DCGM, queues from the quota."""
    at = reading.until
    tally = Tally()
    labels = group_labels(shared.dcgm, shared.label_keys)
    query = prometheus_query(client, SOURCE, at)
    devices = read_devices(query, labels, cfg.window, cfg.step, shared.idle_threshold, tally)
    queues = None
    if shared.report is not None and shared.quota_client is not None:
        with shared.quota_client() as quota:
            on = prometheus_query(quota, SOURCE, at)
            queues = read_queues(on, cfg.window, cfg.step, shared.report.cluster)
    return History(
        cfg.window.total_seconds(),
        cfg.step.total_seconds(),
        devices,
        queues,
        tally.frozen(),
    )


def open_reader(
    config: Config, config_path: str, retries: RetryPolicy | None = None
) -> SourceReader | None:
    """The history read's reader, or None when `advice:` is not configured."""
    cfg = config.advice
    dcgm = config.sources.dcgm
    if cfg is None or dcgm is None or dcgm.prometheus is None:
        return None
    url = dcgm.prometheus.url.rstrip("/")

    def build(settings: AdviceConfig) -> httpx.Client:
        return make_client(url, settings.timeout, ca_file=settings.ca_file or dcgm.ca_file)

    kind = SourceKind(
        SOURCE,
        History,
        lambda c: c.advice,
        partial(shared_settings, config_path=config_path),
        build,
        fetch,
    )
    return SourceReader(
        kind,
        cfg,
        kind.shared(config),
        build(cfg),
        retries or RetryPolicy(),
        partial(build, cfg),
    )

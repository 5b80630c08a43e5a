"""A closed month's Kueue quota, read back from the exporter's own series in Prometheus.

Kueue keeps no history, so without this a closed month's quota rests on Kueue's quotas when
the report runs. The exporter publishes every ClusterQueue's nominal quota and lending limit
(`chargeback_quota_nominal`, `chargeback_quota_lending_limit`; the caller names them, as the
catalogue does); with `report.prometheus` set the report reads them back over the month, one
instant query each at the month's end:

    avg_over_time((max without (instance, pod, prometheus_replica) (<series>))[<month>s:60s])

The time-weighted average is what a quota holder is billed on: a team that held 2 GPUs for
half the month and 4 for the other half reserved 3 GPUs' worth of hours, and the join charges
nominal x the month's hours. The maximum would bill the 4 GPUs for days they were not held.
The subquery evaluates every minute of [start, end) (the instant is the month's end less a
millisecond, so the next month's first sample is out and this month's first is in), and
`max without` first folds the same queue published by both exporters of an HA pair, by a
restarted pod, or kept by two Prometheus replicas, so neither doubles nor splits the month.
Minutes with no sample (the exporter down) are left out of the average rather than read as 0.
The lending limit is averaged as min(lending limit, nominal), as the join uses it.

A sample that is NaN, infinite or negative, or lacks a queue's labels, refuses the report: a
bill must not silently drop a queue's quota. Series of several `cluster` values without a
`report.prometheus.cluster` selector refuse it too, as their queues would be added together.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx

from exporter.calendar import Month
from exporter.config.schema import ReportPrometheus
from exporter.errors import UpstreamPayloadError
from exporter.sources.kueue.records import KueueSnapshot, QuotaRecord
from exporter.sources.prometheus_api import instant_vector
from exporter.sources.report_prometheus import SOURCE, open_client, require_one_cluster

__all__ = ["SOURCE", "QuotaSeries", "quota_history", "quota_queries"]

STEP = 60  # seconds: a minute resolves a quota change well within any scrape interval
_REPLICA_LABELS = "instance, pod, prometheus_replica"
_KEYS = ("cluster_queue", "cohort", "flavor", "resource")


@dataclass(frozen=True)
class QuotaSeries:
    """The names the exporter publishes a queue's quota under: the metric catalogue's, which
    the sources do not import (the exposition is downstream of them)."""

    nominal: str
    lending_limit: str


def quota_queries(cfg: ReportPrometheus, month: Month, series: QuotaSeries) -> dict[str, str]:
    """The PromQL of the month's average nominal quota and lending limit, by field."""
    # A JSON string is a valid PromQL string literal, quotes and backslashes escaped.
    selector = f"{{cluster={json.dumps(cfg.cluster)}}}" if cfg.cluster else ""
    nominal = f"{series.nominal}{selector}"
    limit = f"{series.lending_limit}{selector}"
    # Timestamps, not aware datetimes: in one zone their difference is wall time, an hour off
    # in a month whose summer time starts or ends.
    seconds = round(month.end.timestamp() - month.start.timestamp())

    def average(inner: str) -> str:
        folded = f"max without ({_REPLICA_LABELS}) ({inner})"
        return f"avg_over_time(({folded})[{seconds}s:{STEP}s])"

    return {
        "nominal": average(nominal),
        # An unset limit (+Inf) fails the comparison, so the nominal quota stands for it.
        "lending_limit": average(f"({limit} <= {nominal}) or {nominal}"),
    }


def quota_history(
    cfg: ReportPrometheus, config_path: str, month: Month, series: QuotaSeries
) -> KueueSnapshot:
    """The month's average quota per ClusterQueue, flavor and resource, as Kueue records.

    `config_path` places a relative token file. Raises UpstreamError when Prometheus cannot
    be read or its answer cannot be billed on.
    """
    at = month.end - timedelta(milliseconds=1)
    with open_client(cfg, config_path) as client:
        found = {
            field: _series(client, expr, at, selected=cfg.cluster is not None)
            for field, expr in quota_queries(cfg, month, series).items()
        }
    records = []
    limits = found["lending_limit"]
    for key, nominal in sorted(found["nominal"].items()):
        queue, cohort, flavor, resource = key
        limit = limits.get(key, nominal)
        records.append(QuotaRecord(queue, cohort, flavor, resource, nominal, lending_limit=limit))
    if not records:
        raise UpstreamPayloadError(
            f"{SOURCE}: no {series.nominal} series in the month: was the exporter "
            "scraped then (and is report.prometheus.cluster right)?"
        )
    return KueueSnapshot(tuple(records))


_Key = tuple[str, str, str, str]


def _series(client: httpx.Client, expr: str, at: datetime, *, selected: bool) -> dict[_Key, float]:
    samples = instant_vector(client, SOURCE, expr, at)
    require_one_cluster(samples, "quota", selected=selected)
    out: dict[_Key, float] = {}
    for labels, value in samples:
        if any(k not in labels for k in _KEYS if k != "cohort"):
            raise UpstreamPayloadError(f"{SOURCE}: a quota series lacks its queue labels")
        if not math.isfinite(value) or value < 0:
            raise UpstreamPayloadError(
                f"{SOURCE}: quota of {labels['cluster_queue']} ({labels['resource']}) is "
                f"{value}: a closed month is not billed on it"
            )
        key = (
            labels["cluster_queue"],
            labels.get("cohort", ""),
            labels["flavor"],
            labels["resource"],
        )
        if key in out:
            # Left after folding replicas: the same queue under another label (a `job`)
            # would be billed twice.
            raise UpstreamPayloadError(f"{SOURCE}: several series for {key[0]} ({key[3]})")
        out[key] = value
    return out

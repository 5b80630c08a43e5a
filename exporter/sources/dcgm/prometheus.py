"""DCGM through Prometheus: dcgm-exporter's series as the Prometheus that scrapes it stores them.

Upstream: `GET <url>/api/v1/query?query=...&time=<now>` (Prometheus HTTP API), one instant
query per utilisation metric and one for power draw:

    avg by (<device and workload labels>) (avg_over_time(<metric>[<window>]))

so utilisation (and power) is the mean over the same window as OpenCost's cost rate, not one
30 s sample.
Grouping by the device and workload labels folds the same GPU scraped by two jobs or replicas
(their `instance`/`job` differ) into one series. The envelope is checked: `status` must be
`success` and `resultType` a `vector`; an error envelope (`status: error`, `errorType`,
`error`) fails the refresh naming its type. Values are handed on as Prometheus gives them; the
DCGM parser drops (and counts) NaN, negative and out-of-range ones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import datetime, timedelta

import httpx

from exporter.config.schema import DcgmPrometheus, format_duration
from exporter.sources.prometheus_api import instant_vector

__all__ = ["METRICS", "Series", "group_labels", "instant", "query_expr", "read_series"]

SOURCE = "dcgm"
# Utilisation, and power draw (a price build with `power: measured` reads its mean).
METRICS = ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_POWER_USAGE")
# The labels the DCGM parser reads, in every spelling dcgm-exporter has used.
_DEVICE = ("gpu", "UUID", "uuid", "modelName", "Hostname", "hostname", "GPU_I_PROFILE", "GPU_I_ID")
_WORKLOAD = {
    "exported": ("exported_namespace", "exported_pod", "exported_container"),
    "plain": (
        "namespace",
        "pod",
        "container",
        "pod_namespace",
        "pod_name",
        "container_name",
    ),
}
_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_SANITISE = re.compile(r"[^a-zA-Z0-9_]")

Series = tuple[str, dict[str, str], float]  # metric name, labels, value


def query_expr(metric: str, window: timedelta, labels: Iterable[str]) -> str:
    """The PromQL for one metric's mean over `window`, by the given labels."""
    by = ", ".join(labels)
    return f"avg by ({by}) (avg_over_time({metric}[{format_duration(window)}]))"


def group_labels(cfg: DcgmPrometheus, pod_label_keys: Iterable[str]) -> tuple[str, ...]:
    """The labels to keep: the device's, the workload's, and the pod labels attribution reads.

    dcgm-exporter sanitises a pod label's name (`app.kubernetes.io/team` -> `app_kubernetes_io_
    team`), so the attribution keys are sanitised the same way.
    """
    keys = sorted({_SANITISE.sub("_", key) for key in pod_label_keys if key})
    pod_labels = [k for k in keys if _LABEL_NAME.match(k)]
    seen = [*_DEVICE, *_WORKLOAD[cfg.workload_labels], *pod_labels]
    return tuple(dict.fromkeys(seen))


def read_series(
    client: httpx.Client,
    window: timedelta,
    labels: tuple[str, ...],
    now: datetime,
) -> list[Series]:
    """Both utilisation metrics and power draw, averaged over `window` ending at `now`, as
    (name, labels, value).

    `labels` come from group_labels: with `workload_labels: exported` the plain `pod` and
    `namespace` (the exporter's own pod, set by the scrape) are not kept, so they never pass
    for a workload.
    """
    out: list[Series] = []
    for metric in METRICS:
        found = instant(client, query_expr(metric, window, labels), now)
        out.extend((metric, series, value) for series, value in found)
    return out


def instant(client: httpx.Client, expr: str, at: datetime) -> list[tuple[dict[str, str], float]]:
    """One instant query's vector at `at`, its envelope checked.

    An infinite average is corrupt, not DCGM's blank marker (which the parser skips as absent):
    as NaN the parser drops and counts it.
    """
    found = instant_vector(client, SOURCE, expr, at)
    return [(labels, math.nan if math.isinf(value) else value) for labels, value in found]

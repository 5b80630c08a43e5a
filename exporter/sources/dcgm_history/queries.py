"""The PromQL of the history window: percentiles of DCGM's series and of the exporter's quota.

Upstream: `GET <url>/api/v1/query?query=...&time=<now>` (Prometheus HTTP API). Per DCGM field
(`DCGM_FI_DEV_FB_USED` in MiB, `DCGM_FI_PROF_GR_ENGINE_ACTIVE` as a 0-1 ratio,
`DCGM_FI_DEV_GPU_UTIL` in percent), one instant query each for p50, p95, max and the sample
count over the window, on the series first averaged by the device and workload labels (which
folds one GPU scraped by two jobs or replicas):

    quantile_over_time(0.95, (avg by (<labels>) (DCGM_FI_DEV_FB_USED))[7d:5m])

A `[<window>:<step>]` subquery bounds the work: 7 days at 5 minutes is 2,017 points a series,
20 million at 10,000 GPUs, under Prometheus's default 50 million `--query.max-samples`. The
idle share is the mean of `< bool <threshold>` over the same steps; GPU resets are `resets()`
of the energy counter (`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`, mJ, a counter per GPU).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta

from exporter.config.schema import format_duration
from exporter.sources.dcgm.fields import GPU_UTIL, GR_ENGINE_ACTIVE

__all__ = [
    "ENERGY",
    "FB_USED",
    "GPU_DEVICE",
    "QUOTA_NOMINAL",
    "QUOTA_USAGE",
    "STATS",
    "device_queries",
    "quota_queries",
]

FB_USED = "DCGM_FI_DEV_FB_USED"
ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
# The exporter's own quota series (the catalogue's names; a test holds them equal).
QUOTA_NOMINAL = "chargeback_quota_nominal"
QUOTA_USAGE = "chargeback_quota_usage"
STATS = ("p50", "p95", "max", "samples")
# The labels of one physical GPU, in every spelling dcgm-exporter has used.
GPU_DEVICE = ("gpu", "UUID", "uuid", "Hostname", "hostname")
_REPLICAS = "instance, pod, prometheus_replica"


def _over(stat: str, inner: str, window: str, step: str) -> str:
    ranged = f"({inner})[{window}:{step}]"
    if stat in ("p50", "p95"):
        return f"quantile_over_time(0.{stat[1:]}, {ranged})"
    return f"{'max' if stat == 'max' else 'count'}_over_time({ranged})"


def device_queries(
    labels: Sequence[str], window: timedelta, step: timedelta, threshold: float
) -> dict[tuple[str, str], str]:
    """The PromQL of each (metric, statistic) over the window, plus idle shares and resets."""
    by = ", ".join(labels)
    w, s = format_duration(window), format_duration(step)
    out: dict[tuple[str, str], str] = {}
    for metric in (FB_USED, GR_ENGINE_ACTIVE, GPU_UTIL):
        inner = f"avg by ({by}) ({metric})"
        for stat in STATS:
            out[(metric, stat)] = _over(stat, inner, w, s)
    for metric, limit in ((GR_ENGINE_ACTIVE, threshold), (GPU_UTIL, threshold * 100)):
        below = f"avg by ({by}) ({metric}) < bool {limit:.6g}"
        out[(metric, "idle")] = f"avg_over_time(({below})[{w}:{s}])"
    device = ", ".join(GPU_DEVICE)
    out[(ENERGY, "resets")] = f"max by ({device}) (resets({ENERGY}[{w}]))"
    return out


def quota_queries(
    window: timedelta, step: timedelta, cluster: str | None
) -> dict[tuple[str, str], str]:
    """The PromQL of each queue's mean nominal GPU quota and the spread of its GPU use."""
    matchers = ['resource="nvidia.com/gpu"']
    if cluster:
        matchers.append(f"cluster={json.dumps(cluster)}")
    selector = "{" + ", ".join(matchers) + "}"
    w, s = format_duration(window), format_duration(step)

    def folded(metric: str) -> str:
        return f"max without ({_REPLICAS}) ({metric}{selector})"

    out = {(QUOTA_NOMINAL, "mean"): f"avg_over_time(({folded(QUOTA_NOMINAL)})[{w}:{s}])"}
    for stat in STATS:
        out[(QUOTA_USAGE, stat)] = _over(stat, folded(QUOTA_USAGE), w, s)
    return out

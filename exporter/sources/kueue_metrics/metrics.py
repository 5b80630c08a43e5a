"""Kueue's own metrics, read from the Prometheus that scrapes Kueue: waiting, evictions, shares.

Upstream (`kueue:pkg/metrics/metrics.go`, `site/content/en/docs/reference/metrics.md`):
`kueue_pending_workloads{cluster_queue, status}` (gauge), `kueue_admission_wait_time_seconds
{cluster_queue, priority_class}` (histogram), `kueue_admitted_workloads_total{cluster_queue,
priority_class}`, `kueue_evicted_workloads_total{cluster_queue, reason, underlying_cause,
priority_class}`, `kueue_preempted_workloads_total{preempting_cluster_queue, reason}`
(counters), `kueue_cluster_queue_weighted_share{cluster_queue, cohort}` and
`kueue_cohort_weighted_share{cohort}` (gauges, with fair sharing only). Every series carries
`replica_role` since v0.16; followers of an HA pair are left out (`replica_role!="follower"`
also matches an older Kueue's series, which have no such label).

Each part is one instant query and fails on its own: a part Prometheus has no series for, or
could not answer, is named in `missing`, and the rest is kept. Counters and the histogram are
read as their increase over the window asked for (the month so far).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

import httpx

from exporter.errors import UpstreamError
from exporter.sources.checks import NON_FINITE, OUT_OF_RANGE, WRONG_TYPE, BadRecord, Tally, label
from exporter.sources.kueue_metrics.records import KueueMetrics
from exporter.sources.prometheus_api import instant_vector

__all__ = [
    "PARTS",
    "KueueMetrics",
    "fetch_kueue_metrics",
    "kueue_metric_queries",
    "parse_kueue_metrics",
]

SOURCE = "kueue_metrics"
PARTS = ("pending", "wait", "admitted", "evicted", "preempted", "queue_share", "cohort_share")
_SELECT = '{replica_role!="follower"}'
_Samples = list[tuple[dict[str, str], float]]


def kueue_metric_queries(window_seconds: int) -> dict[str, str]:
    """The PromQL of each part, counters over the last `window_seconds`."""
    w = f"[{max(window_seconds, 60)}s]"

    def increase(metric: str, by: str) -> str:
        return f"sum by ({by}) (increase({metric}{_SELECT}{w}))"

    return {
        "pending": f"sum by (cluster_queue) (kueue_pending_workloads{_SELECT})",
        "wait": increase("kueue_admission_wait_time_seconds_bucket", "cluster_queue, le"),
        "admitted": increase("kueue_admitted_workloads_total", "cluster_queue"),
        "evicted": increase("kueue_evicted_workloads_total", "cluster_queue, reason"),
        "preempted": increase(
            "kueue_preempted_workloads_total", "preempting_cluster_queue, reason"
        ),
        "queue_share": f"max by (cluster_queue) (kueue_cluster_queue_weighted_share{_SELECT})",
        "cohort_share": f"max by (cohort) (kueue_cohort_weighted_share{_SELECT})",
    }


def fetch_kueue_metrics(client: httpx.Client, at: datetime, window_seconds: int) -> KueueMetrics:
    """Every part at `at`; a part that fails is missing. Raises UpstreamError only when every
    part failed, so a Prometheus that is down marks the metrics down, not the quota."""
    found: dict[str, _Samples] = {}
    failed: list[UpstreamError] = []
    for part, expr in kueue_metric_queries(window_seconds).items():
        try:
            found[part] = instant_vector(client, SOURCE, expr, at)
        except UpstreamError as exc:
            failed.append(exc)
    if not found:
        raise failed[0]
    return parse_kueue_metrics(found)


def parse_kueue_metrics(vectors: Mapping[str, _Samples]) -> KueueMetrics:
    """Each part's samples summed by its keys (so raw series and pre-summed ones read alike).

    A sample without its keys, or with a value Kueue never gives (a negative count, a NaN
    where only the shares may be NaN), is dropped and counted; a part absent or empty is
    missing.
    """
    tally = Tally()
    rows = {part: _follower_free(vectors.get(part, [])) for part in PARTS}
    count = _non_negative
    wait: dict[str, dict[float, float]] = defaultdict(dict)
    for (queue, le), n in _sum(rows["wait"], ("cluster_queue", "le"), count, tally).items():
        try:
            wait[queue][_bound(le)] = n
        except BadRecord as exc:
            tally.drop(exc)
    return KueueMetrics(
        pending=_single(_sum(rows["pending"], ("cluster_queue",), count, tally)),
        wait={queue: dict(sorted(b.items())) for queue, b in sorted(wait.items())},
        admitted=_single(_sum(rows["admitted"], ("cluster_queue",), count, tally)),
        evicted=_pairs(_sum(rows["evicted"], ("cluster_queue", "reason"), count, tally)),
        preempted=_pairs(
            _sum(rows["preempted"], ("preempting_cluster_queue", "reason"), count, tally)
        ),
        queue_share=_single(_sum(rows["queue_share"], ("cluster_queue",), _share, tally, max)),
        cohort_share=_single(_sum(rows["cohort_share"], ("cohort",), _share, tally, max)),
        missing=tuple(p for p in PARTS if not rows[p]),
        dropped=tally.frozen(),
    )


def _follower_free(samples: _Samples) -> _Samples:
    return [(labels, v) for labels, v in samples if labels.get("replica_role") != "follower"]


def _sum(
    samples: _Samples,
    keys: tuple[str, ...],
    check: Callable[[float, str], float],
    tally: Tally,
    fold: Callable[[Iterable[float]], float] = math.fsum,
) -> dict[tuple[str, ...], float]:
    groups: dict[tuple[str, ...], list[float]] = defaultdict(list)
    for labels, value in samples:
        try:
            key = tuple(label(labels.get(k), f"a Kueue series' {k}") for k in keys)
            checked = check(value, "/".join(key))
        except BadRecord as exc:
            tally.drop(exc)
            continue
        groups[key].append(checked)
    return {key: _fold(values, fold) for key, values in sorted(groups.items())}


def _fold(values: list[float], fold: Callable[[Iterable[float]], float]) -> float:
    # NaN (a zero weight while borrowing) outranks every share: max() would depend on order.
    return math.nan if any(math.isnan(v) for v in values) else fold(values)


def _non_negative(value: float, what: str) -> float:
    if math.isnan(value) or math.isinf(value):
        raise BadRecord(NON_FINITE, f"{what}: {value} where Kueue counts")
    if value < 0:
        raise BadRecord(OUT_OF_RANGE, f"{what}: {value:g} where Kueue counts")
    return value


def _share(value: float, what: str) -> float:
    if math.isnan(value):
        return value
    if math.isinf(value) or value < 0:
        raise BadRecord(OUT_OF_RANGE, f"{what}: a weighted share of {value}")
    return value


def _bound(text: str) -> float:
    try:
        le = float(text)
    except ValueError:
        raise BadRecord(WRONG_TYPE, f"a bucket bound {text[:20]!r}") from None
    if math.isnan(le):
        raise BadRecord(NON_FINITE, "a bucket bound NaN")
    return le


def _single(found: Mapping[tuple[str, ...], float]) -> dict[str, float]:
    return {key[0]: value for key, value in found.items()}


def _pairs(found: Mapping[tuple[str, ...], float]) -> dict[tuple[str, str], float]:
    return {(key[0], key[1]): value for key, value in found.items()}

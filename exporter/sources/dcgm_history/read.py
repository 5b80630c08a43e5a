"""The history window read: DCGM's spreads per held GPU or MIG instance, and quota per queue.

Each query's vector is keyed by the series' identity (node, GPU, MIG instance, UUID and
workload). A series nobody held (no pod) is unallocated: no workload to advise, so skipped. A
series that lacks its `gpu` label, or a MIG series with DCGM's blank profile, is dropped and
counted. Values are kept as Prometheus gives them (NaN too): the advice withholds a workload
whose evidence is not a number and says so, rather than the read hiding it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

import httpx

from exporter.errors import UpstreamPayloadError
from exporter.sources.checks import MISSING_FIELD, BadRecord, Tally
from exporter.sources.dcgm.fields import BLANK_TEXT, GPU_UTIL, GR_ENGINE_ACTIVE, describe
from exporter.sources.dcgm_history.queries import (
    ENERGY,
    FB_USED,
    QUOTA_NOMINAL,
    QUOTA_USAGE,
    device_queries,
    quota_queries,
)
from exporter.sources.dcgm_history.records import DeviceHistory, QueueHistory, Spread
from exporter.sources.prometheus_api import instant_vector

__all__ = ["read_devices", "read_queues"]

Vector = list[tuple[dict[str, str], float]]
_Key = tuple[str, ...]  # node, gpu, uuid, mig instance, namespace, pod, container
Query = Callable[[str], Vector]


def read_devices(
    query: Query,
    labels: tuple[str, ...],
    window: timedelta,
    step: timedelta,
    threshold: float,
    tally: Tally,
) -> tuple[DeviceHistory, ...]:
    """Every held GPU or MIG instance's spreads over the window, by identity."""
    found = {k: query(expr) for k, expr in device_queries(labels, window, step, threshold).items()}
    resets = _resets(found.pop((ENERGY, "resets")))
    stats: dict[tuple[str, str], dict[_Key, float]] = {}
    seen: dict[_Key, tuple[dict[str, str], dict[str, str]]] = {}
    bad: set[tuple[tuple[str, str], ...]] = set()  # a bad series is in every answer: count once
    for field, vector in found.items():
        stats[field] = _keyed(vector, seen, bad, tally)
    out = []
    for key in sorted(seen):
        ident, pod_labels = seen[key]
        engine = _spread(stats, GR_ENGINE_ACTIVE, key, 1.0)
        share = stats[(GR_ENGINE_ACTIVE, "idle")].get(key)
        if engine is None:  # engine activity where the GPU has it, else GPU_UTIL in percent
            engine = _spread(stats, GPU_UTIL, key, 100.0)
            share = stats[(GPU_UTIL, "idle")].get(key)
        out.append(
            DeviceHistory(
                ident["namespace"],
                ident["pod"],
                ident["container"],
                ident["node"],
                ident["gpu"],
                ident["uuid"],
                ident["model"],
                ident["mig_profile"],
                tuple(sorted(pod_labels.items())),
                _spread(stats, FB_USED, key, 1.0),
                engine,
                share,
                resets.get((ident["node"], ident["gpu"], ident["uuid"]), 0),
            )
        )
    return tuple(out)


def read_queues(
    query: Query, window: timedelta, step: timedelta, cluster: str | None
) -> tuple[QueueHistory, ...]:
    """Every ClusterQueue's mean nominal GPU quota and the spread of its use."""
    found: dict[tuple[str, str], dict[tuple[str, str, str], float]] = {}
    for field, expr in quota_queries(window, step, cluster).items():
        found[field] = {}
        for labels, value in query(expr):
            names = (
                labels.get("cluster_queue", ""),
                labels.get("flavor", ""),
                labels.get("resource", ""),
            )
            if not all(names):
                raise UpstreamPayloadError("advice: a quota series lacks its queue labels")
            if names in found[field]:
                # Left after folding replicas: one queue under another label (a `job`).
                raise UpstreamPayloadError(f"advice: several quota series for {names[0]}")
            found[field][names] = value
    out = []
    for names, nominal in sorted(found[(QUOTA_NOMINAL, "mean")].items()):
        stat = {s: found[(QUOTA_USAGE, s)].get(names) for s in ("p50", "p95", "max", "samples")}
        values = [v for v in stat.values() if v is not None]
        if len(values) < len(stat):
            continue  # a queue nobody used in the window has no use series: nothing to say
        p50, p95, top, samples = values
        spread = Spread(p50, p95, top, _count(samples))
        out.append(QueueHistory(names[0], names[1], names[2], nominal, spread))
    return tuple(out)


def _keyed(
    vector: Vector,
    seen: dict[_Key, tuple[dict[str, str], dict[str, str]]],
    bad: set[tuple[tuple[str, str], ...]],
    tally: Tally,
) -> dict[_Key, float]:
    out: dict[_Key, float] = {}
    for labels, value in vector:
        try:
            key, ident, pod_labels = _identity(labels)
        except BadRecord as exc:
            series = tuple(sorted(labels.items()))
            if series not in bad:
                bad.add(series)
                tally.drop(exc)
            continue
        if key is None:
            continue
        seen.setdefault(key, (ident, pod_labels))
        out[key] = value
    return out


def _identity(labels: Mapping[str, str]) -> tuple[_Key | None, dict[str, str], dict[str, str]]:
    if "gpu" not in labels:
        raise BadRecord(MISSING_FIELD, "advice: a DCGM series lacks its gpu label")
    ident, pod_labels = describe(labels)
    if ident["mig_profile"].startswith(BLANK_TEXT):
        raise BadRecord(MISSING_FIELD, f"advice: GPU {ident['gpu']!r} has DCGM's blank profile")
    if not ident["pod"]:
        return None, ident, pod_labels  # nobody held it: unallocated, no workload to advise
    names = ("node", "gpu", "uuid", "mig_instance", "namespace", "pod", "container")
    return tuple(ident[n] for n in names), ident, pod_labels


def _spread(
    stats: Mapping[tuple[str, str], Mapping[_Key, float]], metric: str, key: _Key, scale: float
) -> Spread | None:
    values = [stats[(metric, s)].get(key) for s in ("p50", "p95", "max", "samples")]
    if any(v is None for v in values):
        return None
    p50, p95, top, samples = (v if v is not None else math.nan for v in values)
    return Spread(p50 / scale, p95 / scale, top / scale, _count(samples))


def _count(value: float) -> int:
    # A count that is not a whole number is not a count: no samples, so thin history.
    return int(value) if math.isfinite(value) and value >= 0 and value == int(value) else 0


def _resets(vector: Vector) -> dict[tuple[str, str, str], int]:
    out: dict[tuple[str, str, str], int] = {}
    for labels, value in vector:
        ident = (
            labels.get("Hostname") or labels.get("hostname", ""),
            labels.get("gpu", ""),
            labels.get("UUID") or labels.get("uuid", ""),
        )
        # A reset count that is not a number cannot clear the GPU: count it as one.
        out[ident] = max(out.get(ident, 0), _count(value) if math.isfinite(value) else 1)
    return out


def prometheus_query(client: httpx.Client, source: str, at: datetime) -> Query:
    """A query function over one Prometheus client, every query at `at`."""
    return lambda expr: instant_vector(client, source, expr, at)

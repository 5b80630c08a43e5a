"""A fake Prometheus holding Kueue's own metrics for the demo: GET /api/v1/query.

It answers the queries the Kueue metrics source makes (exporter/sources/kueue_metrics), each
by the metric it names, from the same Workloads the fake Kueue serves (fake_workloads.py): the
pending ones now; admission waits (10 minutes from creation, 10 hours for a sweep requeued
after its preemption) in Kueue's buckets (1, then 2.5 s doubling); admissions, evictions by
reason and preemptions by the preempting queue (vision reclaiming its quota) over the month
so far; and a weighted share for the queue that borrows now (research by night, vision by day,
half of what the cohort can lend: 500 on Kueue's x1000 scale). Answers come summed by the
query's labels, as Prometheus's `sum by` gives them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from chargeback_demo.cluster import Cluster
from chargeback_demo.fake_vllm import _error, _time, _vector
from chargeback_demo.fake_workloads import workloads
from chargeback_demo.httpfake import FakeRequest, FakeResponse
from exporter.clock import Clock
from exporter.sources.checks import Tally
from exporter.sources.kueue.workloads import WorkloadRecord, parse_workloads

__all__ = ["BUCKETS", "make_handler"]

BUCKETS = (1.0, *(2.5 * 2**i for i in range(13)))  # Kueue's generateExponentialBuckets(14)
_Result = list[tuple[dict[str, str], float]]


def make_handler(cluster: Cluster, clock: Clock) -> Callable[[FakeRequest], FakeResponse]:
    """A request handler speaking Prometheus's instant query API over Kueue's series."""

    def handle(request: FakeRequest) -> FakeResponse:
        if request.path == "/-/ready":
            return FakeResponse(200, b"Prometheus Server is Ready.\n")
        if request.path != "/api/v1/query" or request.method != "GET":
            return FakeResponse(404, b"404 page not found\n", {"Content-Type": "text/plain"})
        try:
            at = _time(request.arg("time"), clock())
        except ValueError as exc:
            return _error(str(exc))
        query = request.arg("query") or ""
        found = _routed(cluster, parse_workloads(workloads(cluster, at, "v1beta2"), Tally()))
        for name, answer in _ANSWERS.items():
            if name in query:
                return _vector(at, answer(cluster, found, at))
        return _vector(at, [])

    return handle


def _routed(cluster: Cluster, found: tuple[WorkloadRecord, ...]) -> tuple[WorkloadRecord, ...]:
    """Each Workload with its ClusterQueue, as Kueue labels its metrics (its LocalQueue's)."""
    queues = {w.namespace: w.queue for w in cluster.workloads if w.queue}
    return tuple(replace(w, cluster_queue=queues.get(w.namespace, "")) for w in found)


def _pending(cluster: Cluster, found: tuple[WorkloadRecord, ...], at: datetime) -> _Result:
    counts = {q.name: 0.0 for q in cluster.queues}
    for w in found:
        if w.quota_reserved_at is None and w.finished_at is None:
            counts[w.cluster_queue] += 1
    return [({"cluster_queue": q}, n) for q, n in sorted(counts.items())]


def _waits(found: tuple[WorkloadRecord, ...], at: datetime) -> dict[str, list[float]]:
    start = at.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    out: dict[str, list[float]] = defaultdict(list)
    for w in found:
        if w.quota_reserved_at is None or not start <= w.quota_reserved_at <= at:
            continue
        since = w.evicted_at - timedelta(hours=10) if w.evictions and w.evicted_at else w.created
        out[w.cluster_queue].append((w.quota_reserved_at - since).total_seconds())
    return out


def _wait(cluster: Cluster, found: tuple[WorkloadRecord, ...], at: datetime) -> _Result:
    result: _Result = []
    for queue, waits in sorted(_waits(found, at).items()):
        for le in (*BUCKETS, float("inf")):
            bound = "+Inf" if le == float("inf") else f"{le:g}"
            result.append(
                ({"cluster_queue": queue, "le": bound}, sum(1.0 for s in waits if s <= le))
            )
    return result


def _admitted(cluster: Cluster, found: tuple[WorkloadRecord, ...], at: datetime) -> _Result:
    return [({"cluster_queue": q}, float(len(w))) for q, w in sorted(_waits(found, at).items())]


def _evicted(cluster: Cluster, found: tuple[WorkloadRecord, ...], at: datetime) -> _Result:
    counts: dict[tuple[str, str], float] = defaultdict(float)
    for w in found:
        for reason, n in w.evictions.items():
            counts[(w.cluster_queue, reason)] += n
    return [({"cluster_queue": q, "reason": r}, n) for (q, r), n in sorted(counts.items())]


def _preempted(cluster: Cluster, found: tuple[WorkloadRecord, ...], at: datetime) -> _Result:
    n = sum(float(w.evictions.get("Preempted", 0)) for w in found)
    labels = {"preempting_cluster_queue": "cq-vision", "reason": "InCohortReclamation"}
    return [(labels, n)] if n else []


def _queue_share(cluster: Cluster, found: tuple[WorkloadRecord, ...], at: datetime) -> _Result:
    night = not 8 <= at.astimezone(UTC).hour < 18
    borrowing = "cq-research" if night else "cq-vision"
    return [
        ({"cluster_queue": q.name}, 500.0 if q.name == borrowing else 0.0) for q in cluster.queues
    ]


def _cohort_share(cluster: Cluster, found: tuple[WorkloadRecord, ...], at: datetime) -> _Result:
    return [({"cohort": cluster.cohort}, 0.0)]


# Matched in this order: a longer name before any name it contains.
_ANSWERS: dict[str, Callable[[Cluster, tuple[WorkloadRecord, ...], datetime], _Result]] = {
    "kueue_pending_workloads": _pending,
    "kueue_admission_wait_time_seconds_bucket": _wait,
    "kueue_admitted_workloads_total": _admitted,
    "kueue_evicted_workloads_total": _evicted,
    "kueue_preempted_workloads_total": _preempted,
    "kueue_cluster_queue_weighted_share": _queue_share,
    "kueue_cohort_weighted_share": _cohort_share,
}

"""The demo's Kueue Workloads and LocalQueues, derived from the simulated cluster.

Each queued workload of the cluster is one Workload admitted since the month began, except
research's night `sweep`: one Workload a night, created at 17:50 and admitted at 18:00 UTC. Now
and then (nights whose day of month divides by 3) vision reclaims its lent GPU at 08:00 while
the sweep still runs: Kueue evicts it (`Evicted` reason `Preempted`, `Preempted` reason
`InCohortReclamation`), its 14 hours admitted are thrown away, and it waits, requeued, until
it is admitted again at 18:00 and runs the next night in place of that night's own sweep. The
shapes follow Kueue's v1beta2 Workload (docs/sources/kueue.md).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from chargeback_demo.cluster import Cluster, Workload

__all__ = ["local_queues", "workloads"]

GROUP = "kueue.x-k8s.io"
GPU = "nvidia.com/gpu"
SWEEP = "sweep"
_RAN = timedelta(hours=14)  # 18:00 to the 08:00 eviction


def local_queues(cluster: Cluster, version: str) -> list[dict[str, Any]]:
    """One LocalQueue per namespace that queues, pointing at its ClusterQueue."""
    pairs = sorted({(w.namespace, w.queue) for w in cluster.workloads if w.queue})
    return [
        {
            "apiVersion": f"{GROUP}/{version}",
            "kind": "LocalQueue",
            "metadata": {"namespace": ns, "name": "default"},
            "spec": {"clusterQueue": queue},
        }
        for ns, queue in pairs
    ]


def workloads(cluster: Cluster, now: datetime, version: str) -> list[dict[str, Any]]:
    """Every Workload of the month up to `now`, sorted by namespace and name."""
    start = now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    out = []
    for w in cluster.workloads:
        if not w.queue or not w.gpus:
            continue
        if w.name == SWEEP:
            out.extend(_sweeps(w, start, now, version, cluster.gpu_flavor))
        else:
            created = start
            status = _admitted(created + _WAIT)
            out.append(_object(w, w.name, created, version, status, cluster.gpu_flavor))
    return sorted(out, key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]))


_WAIT = timedelta(minutes=10)


def _preempted(night: datetime) -> bool:
    return night.day % 3 == 0


def _sweeps(
    w: Workload, start: datetime, now: datetime, version: str, flavor: str
) -> list[dict[str, Any]]:
    out = []
    night = start - timedelta(days=1)  # last month's last sweep still runs into the 1st
    while night + timedelta(hours=18) <= now:
        created = night + timedelta(hours=18) - _WAIT
        if _preempted(night - timedelta(days=1)):
            night += timedelta(days=1)  # the requeued sweep runs tonight in its place
            continue
        name = f"{SWEEP}-{night:%m%d}"
        admitted = created + _WAIT
        morning = admitted + _RAN
        if _preempted(night) and morning <= now:
            status = _evicted(admitted, morning, now)
        else:
            status = _admitted(admitted)
            if morning <= now:
                status["conditions"].append(_condition("Finished", "True", "Succeeded", morning))
        if morning > start:  # a sweep that ended last month is not listed
            out.append(_object(w, name, created, version, status, flavor))
        night += timedelta(days=1)
    return out


def _evicted(admitted: datetime, evicted: datetime, now: datetime) -> dict[str, Any]:
    """Preempted at 08:00 after 14 h, waiting until 18:00, then admitted again."""
    readmitted = evicted + timedelta(hours=10)
    stats = {"evictions": [{"reason": "Preempted", "underlyingCause": "", "count": 1}]}
    base = {
        "accumulatedPastExecutionTimeSeconds": int(_RAN.total_seconds()),
        "schedulingStats": stats,
    }
    if now < readmitted:
        message = "Preempted to accommodate a workload due to reclamation of nominal quota"
        return {
            **base,
            "conditions": [
                _condition("QuotaReserved", "False", "Pending", evicted),
                _condition("Admitted", "False", "NoReservation", evicted),
                _condition("Evicted", "True", "Preempted", evicted, message),
                _condition("Preempted", "True", "InCohortReclamation", evicted, message),
                _condition("Requeued", "True", "Preempted", evicted),
            ],
        }
    status = _admitted(readmitted)
    status["conditions"] += [
        _condition("Evicted", "False", "QuotaReserved", readmitted),
        _condition("Preempted", "False", "QuotaReserved", readmitted),
    ]
    if readmitted + _RAN <= now:
        status["conditions"].append(_condition("Finished", "True", "Succeeded", readmitted + _RAN))
    return {**base, **status}


def _admitted(at: datetime) -> dict[str, Any]:
    return {
        "conditions": [
            _condition("QuotaReserved", "True", "QuotaReserved", at),
            _condition("Admitted", "True", "Admitted", at),
        ]
    }


def _condition(
    kind: str, status: str, reason: str, at: datetime, message: str = ""
) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _object(
    w: Workload,
    name: str,
    created: datetime,
    version: str,
    status: dict[str, Any],
    flavor: str,
) -> dict[str, Any]:
    reserved = any(
        c["type"] == "QuotaReserved" and c["status"] == "True" for c in status["conditions"]
    )
    finished = any(c["type"] == "Finished" for c in status["conditions"])
    if reserved and not finished:
        status = {
            **status,
            "admission": {
                "clusterQueue": w.queue,
                "podSetAssignments": [
                    {"name": "main", "count": 1, "flavors": {GPU: flavor},
                     "resourceUsage": {GPU: str(len(w.gpus))}}
                ],
            },
        }  # fmt: skip
    container = {"name": "main", "resources": {"requests": {GPU: str(len(w.gpus))}}}
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "Workload",
        "metadata": {
            "namespace": w.namespace,
            "name": name,
            "labels": dict(w.labels),
            "creationTimestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "spec": {
            "queueName": "default",
            "podSets": [
                {"name": "main", "count": 1, "template": {"spec": {"containers": [container]}}}
            ],
        },
        "status": status,
    }

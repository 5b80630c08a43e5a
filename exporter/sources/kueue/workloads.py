"""Kueue Workload objects decoded: GPUs requested, queue, pending span and evictions of each.

Upstream (`kueue:apis/kueue/v1beta2/workload_types.go`, the same fields in v1beta1):
`spec.queueName` (the LocalQueue), `spec.podSets[] {name, count, template}`,
`status.admission {clusterQueue, podSetAssignments[] {flavors, resourceUsage}}` (cleared when
quota is released, as on eviction), `status.conditions[]` (`QuotaReserved`, `Admitted`,
`Evicted`, `Preempted`, `Finished`, ...), `status.accumulatedPastExecutionTimeSeconds` (the time
spent admitted in earlier admit-evict cycles, Kueue >= v0.9) and `status.schedulingStats.evictions
[] {reason, underlyingCause, count}` (Kueue >= v0.12). On re-admission Kueue turns `Evicted`
False with reason `QuotaReserved`, so the reasons of past evictions survive only in the
scheduling stats. A bad Workload is dropped and counted; it never spoils the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from exporter.sources.checks import (
    MISSING_FIELD,
    OUT_OF_RANGE,
    WRONG_TYPE,
    BadRecord,
    Tally,
    count,
    label,
)
from exporter.sources.kueue.quantity import parse_quantity
from exporter.sources.kueue.shapes import as_array, as_object, as_string

__all__ = [
    "GPU",
    "UNKNOWN_REASON",
    "Scheduling",
    "WorkloadRecord",
    "parse_workload",
    "parse_workloads",
]

GPU = "nvidia.com/gpu"
UNKNOWN_REASON = "Unknown"  # evicted, but neither the condition nor the stats say why
# No workload holds a million GPUs, nor runs longer than Kueue's int32 seconds allow.
_MAX_GPUS = 1e6
_MAX_SECONDS = 2**31


@dataclass(frozen=True)
class WorkloadRecord:
    """One Workload as the queue figures need it."""

    namespace: str
    name: str
    labels: Mapping[str, str]
    local_queue: str
    cluster_queue: str  # from status.admission; "" when it holds no quota now
    gpus: float  # GPUs of all its pods: per-pod requests x count, summed over pod sets
    gpu_flavor: str  # the flavor its GPUs were admitted on; "" when not admitted now
    created: datetime
    quota_reserved_at: datetime | None  # QuotaReserved True since; None without quota
    finished_at: datetime | None
    evicted_at: datetime | None  # the Evicted condition's last transition (True or False)
    evicted_now: bool  # Evicted is True: quota released, waiting to be requeued
    ran_seconds: float  # admitted in earlier admit-evict cycles
    evictions: Mapping[str, int] = field(default_factory=dict)  # by reason, all cycles

    @property
    def key(self) -> str:
        """namespace/name: the only per-workload label, and only among the top N."""
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Scheduling:
    """Every Workload (its ClusterQueue filled in from its LocalQueue), and what is missing."""

    workloads: tuple[WorkloadRecord, ...] = ()
    missing: tuple[str, ...] = ()  # parts not read: "workloads"
    dropped: Mapping[str, int] = field(default_factory=dict)


def parse_workloads(items: list[Any], tally: Tally) -> tuple[WorkloadRecord, ...]:
    """Every Workload that reads, sorted by namespace and name; the others counted in `tally`."""
    out = []
    for item in items:
        try:
            out.append(parse_workload(item))
        except BadRecord as exc:
            tally.drop(exc)
    return tuple(sorted(out, key=lambda w: (w.namespace, w.name)))


def parse_workload(item: Any) -> WorkloadRecord:
    """One Workload object to its record; BadRecord when it cannot be used."""
    obj = as_object(item, "Workload")
    meta = as_object(obj.get("metadata"), "Workload metadata")
    name = label(as_string(meta.get("name"), "Workload name"), "a Workload's name")
    namespace = label(as_string(meta.get("namespace"), "namespace"), "a Workload's namespace")
    if not name or not namespace:
        raise BadRecord(MISSING_FIELD, "a Workload has no metadata.name or namespace")
    where = f"Workload {namespace}/{name}"
    labels = {
        label(k, f"{where} label"): label(v, f"{where} label {k!r}")
        for k, v in as_object(meta.get("labels"), f"{where} labels").items()
    }
    spec = as_object(obj.get("spec"), f"{where} spec")
    status = as_object(obj.get("status"), f"{where} status")
    admission = as_object(status.get("admission"), f"{where} admission")
    conditions = _conditions(status.get("conditions"), where)
    created = _time(meta.get("creationTimestamp"), f"{where} creationTimestamp")
    evicted = conditions.get("Evicted")
    stats = as_object(status.get("schedulingStats"), f"{where} schedulingStats")
    ran = status.get("accumulatedPastExecutionTimeSeconds")
    return WorkloadRecord(
        namespace=namespace,
        name=name,
        labels=labels,
        local_queue=label(as_string(spec.get("queueName"), f"{where} queueName"), where),
        cluster_queue=label(as_string(admission.get("clusterQueue"), f"{where} queue"), where),
        gpus=_gpus(spec, where),
        gpu_flavor=_gpu_flavor(admission, where),
        created=created,
        quota_reserved_at=_true_since(conditions.get("QuotaReserved")),
        finished_at=_true_since(conditions.get("Finished")),
        evicted_at=evicted[1] if evicted else None,
        evicted_now=bool(evicted and evicted[0] == "True"),
        ran_seconds=float(count(ran, f"{where} accumulatedPastExecutionTimeSeconds")),
        evictions=_evictions(stats.get("evictions"), evicted, where),
    )


_Condition = tuple[str, datetime, str]  # status, lastTransitionTime, reason


def _conditions(value: Any, where: str) -> dict[str, _Condition]:
    out: dict[str, _Condition] = {}
    for item in as_array(value, f"{where} conditions"):
        cond = as_object(item, f"{where} condition")
        kind = as_string(cond.get("type"), f"{where} condition type")
        state = as_string(cond.get("status"), f"{where} {kind} status")
        if state not in ("True", "False", "Unknown"):
            raise BadRecord(WRONG_TYPE, f"{where} {kind} status is {state[:20]!r}")
        when = _time(cond.get("lastTransitionTime"), f"{where} {kind} lastTransitionTime")
        reason = label(as_string(cond.get("reason"), f"{where} {kind} reason"), where)
        out[kind] = (state, when, reason)
    return out


def _true_since(cond: _Condition | None) -> datetime | None:
    return cond[1] if cond is not None and cond[0] == "True" else None


def _evictions(value: Any, evicted: _Condition | None, where: str) -> dict[str, int]:
    """Evictions by reason: Kueue's stats, else the one an Evicted condition names."""
    out: dict[str, int] = {}
    for item in as_array(value, f"{where} schedulingStats.evictions"):
        entry = as_object(item, f"{where} eviction stats")
        reason = label(as_string(entry.get("reason"), f"{where} eviction reason"), where)
        n = count(entry.get("count"), f"{where} eviction count")
        # One reason may come once per underlying cause: they add up.
        out[reason or UNKNOWN_REASON] = out.get(reason or UNKNOWN_REASON, 0) + n
    if not out and evicted is not None:
        # Without stats (Kueue < v0.12) only a still-evicted workload says why.
        out[evicted[2] if evicted[0] == "True" and evicted[2] else UNKNOWN_REASON] = 1
    return {reason: n for reason, n in sorted(out.items()) if n}


def _gpus(spec: Mapping[str, Any], where: str) -> float:
    total = 0.0
    for item in as_array(spec.get("podSets"), f"{where} podSets"):
        podset = as_object(item, f"{where} podSet")
        pods = count(podset.get("count", 1), f"{where} podSet count")
        template = as_object(podset.get("template"), f"{where} podSet template")
        total += _pod_gpus(as_object(template.get("spec"), f"{where} pod spec"), where) * pods
    if total >= _MAX_GPUS:
        raise BadRecord(OUT_OF_RANGE, f"{where} asks for {total:g} GPUs")
    return total


def _pod_gpus(pod: Mapping[str, Any], where: str) -> float:
    """A pod's GPUs as the scheduler counts them: its containers' sum, or an init container's
    more (init containers run one at a time); an extended resource's request is its limit."""

    def of(key: str) -> list[float]:
        found = []
        for c in as_array(pod.get(key), f"{where} {key}"):
            resources = as_object(as_object(c, f"{where} container").get("resources"), where)
            requests = as_object(resources.get("requests"), f"{where} requests")
            limits = as_object(resources.get("limits"), f"{where} limits")
            value = requests.get(GPU, limits.get(GPU, 0))
            try:
                found.append(parse_quantity(value))
            except ValueError as exc:
                raise BadRecord(WRONG_TYPE, f"{where} {GPU}: {exc}") from None
        return found

    return max([sum(of("containers")), *of("initContainers")])


def _gpu_flavor(admission: Mapping[str, Any], where: str) -> str:
    for item in as_array(admission.get("podSetAssignments"), f"{where} podSetAssignments"):
        flavors = as_object(as_object(item, where).get("flavors"), f"{where} flavors")
        flavor = flavors.get(GPU)
        if flavor is not None:
            return label(as_string(flavor, f"{where} GPU flavor"), where)
    return ""


def _time(value: Any, what: str) -> datetime:
    text = as_string(value, what)
    if not text:
        raise BadRecord(MISSING_FIELD, f"{what} is missing")
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise BadRecord(WRONG_TYPE, f"{what} is not an RFC 3339 time") from None
    if when.tzinfo is None:
        raise BadRecord(WRONG_TYPE, f"{what} has no zone")
    return when

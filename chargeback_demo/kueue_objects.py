"""Kueue's ClusterQueue, Cohort and ResourceFlavor objects for the demo cluster, as a GET returns
them: quota and its usage in Kueue's quantity spellings, in v1beta2 or v1beta1."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from chargeback_demo.cluster import Cluster, Queue

__all__ = ["CPU_FLAVOR", "GROUP", "cluster_queue", "cohort", "resource_flavor"]

GROUP = "kueue.x-k8s.io"
GPU = "nvidia.com/gpu"
CPU_FLAVOR = "default-flavor"


def _cpu(cores: float) -> str:
    # Kueue formats cpu in milli form unless whole: "500m", "30500m", "32".
    return str(int(cores)) if cores == int(cores) else f"{round(cores * 1000)}m"


def _memory(gib: float) -> str:
    return f"{int(gib)}Gi" if gib == int(gib) else f"{round(gib * 1024)}Mi"


def _parse_cpu(text: str) -> float:
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def _parse_gib(text: str) -> float:
    return float(text[:-2]) if text.endswith("Gi") else float(text[:-2]) / 1024


def _usage(cluster: Cluster, queue: Queue, now: datetime) -> dict[str, float]:
    running = [w for w in cluster.workloads if w.queue == queue.name and w.runs_at(now)]
    return {
        "cpu": sum(w.cpu for w in running),
        "memory": sum(w.ram_gib for w in running),
        GPU: float(cluster.queue_usage(queue.name, now)),
    }


def _flavors_status(cluster: Cluster, queue: Queue, now: datetime) -> list[dict[str, Any]]:
    used = _usage(cluster, queue, now)
    nominal = {
        "cpu": _parse_cpu(queue.cpu_nominal),
        "memory": _parse_gib(queue.memory_nominal),
        GPU: float(queue.gpu_nominal),
    }
    fmt: dict[str, Callable[[float], str]] = {"cpu": _cpu, "memory": _memory, GPU: _cpu}

    def entry(resource: str) -> dict[str, str]:
        borrowed = max(0.0, used[resource] - nominal[resource])
        return {
            "name": resource,
            "total": fmt[resource](used[resource]),
            "borrowed": fmt[resource](borrowed),
        }

    return [
        {"name": CPU_FLAVOR, "resources": [entry("cpu"), entry("memory")]},
        {"name": cluster.gpu_flavor, "resources": [entry(GPU)]},
    ]


def _gpu_quota(queue: Queue, as_number: bool) -> dict[str, Any]:
    # Quantities are int-or-string in the CRD, so both come back from a real API server.
    quota: dict[str, Any] = {
        "name": GPU,
        "nominalQuota": queue.gpu_nominal if as_number else str(queue.gpu_nominal),
    }
    if queue.lending_limit is not None:
        quota["lendingLimit"] = str(queue.lending_limit)
    return quota


def cluster_queue(cluster: Cluster, queue: Queue, now: datetime, version: str) -> dict[str, Any]:
    """One ClusterQueue object as a GET in `version` returns it."""
    index = cluster.queues.index(queue)
    cohort_key = "cohortName" if version == "v1beta2" else "cohort"
    cpu_nominal: Any = int(queue.cpu_nominal) if index % 2 == 0 else queue.cpu_nominal
    status = _flavors_status(cluster, queue, now)
    running = sum(1 for w in cluster.workloads if w.queue == queue.name and w.runs_at(now))
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "ClusterQueue",
        "metadata": {
            "name": queue.name,
            "uid": f"00000000-0000-4000-8000-{index:012d}",
            "resourceVersion": str(1000 + index),
            "generation": 1,
            "creationTimestamp": "2026-01-05T09:00:00Z",
            "finalizers": [f"{GROUP}/resource-in-use"],
        },
        "spec": {
            cohort_key: cluster.cohort,
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "stopPolicy": "None",
            "flavorFungibility": {
                "whenCanBorrow": "MayStopSearch",
                "whenCanPreempt": "TryNextFlavor",
            },
            "preemption": {
                "reclaimWithinCohort": "Never",
                "withinClusterQueue": "Never",
                "borrowWithinCohort": {"policy": "Never"},
            },
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": CPU_FLAVOR,
                            "resources": [
                                {"name": "cpu", "nominalQuota": cpu_nominal},
                                {"name": "memory", "nominalQuota": queue.memory_nominal},
                            ],
                        }
                    ],
                },
                {
                    "coveredResources": [GPU],
                    "flavors": [
                        {"name": cluster.gpu_flavor, "resources": [_gpu_quota(queue, index != 1)]}
                    ],
                },
            ],
        },
        "status": {
            "pendingWorkloads": 0,
            "reservingWorkloads": running,
            "admittedWorkloads": running,
            "conditions": [
                {
                    "type": "Active",
                    "status": "True",
                    "reason": "Ready",
                    "message": "Can admit new workloads",
                    "observedGeneration": 1,
                    "lastTransitionTime": "2026-01-05T09:00:05Z",
                }
            ],
            "flavorsReservation": status,
            "flavorsUsage": status,
        },
    }


def cohort(cluster: Cluster, version: str) -> dict[str, Any]:
    """The cluster's one Cohort object."""
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "Cohort",
        "metadata": {"name": cluster.cohort, "resourceVersion": "900", "generation": 1},
        "spec": {},
        "status": {},
    }


def resource_flavor(cluster: Cluster, name: str, version: str) -> dict[str, Any]:
    """A ResourceFlavor as a GET returns it; the GPU flavor selects nodes by GPU product."""
    spec: dict[str, Any] = {}
    if name == cluster.gpu_flavor:
        # GPU feature discovery's spelling of the product: DCGM's modelName with dashes.
        spec["nodeLabels"] = {"nvidia.com/gpu.product": cluster.gpu_model.replace(" ", "-")}
        spec["nodeTaints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    index = 0 if name == CPU_FLAVOR else 1
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "ResourceFlavor",
        "metadata": {
            "name": name,
            "uid": f"00000000-0000-4000-9000-{index:012d}",
            "resourceVersion": str(800 + index),
            "generation": 1,
            "creationTimestamp": "2026-01-05T08:59:00Z",
            "finalizers": [f"{GROUP}/resource-in-use"],
        },
        "spec": spec,
    }

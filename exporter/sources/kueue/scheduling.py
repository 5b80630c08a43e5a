"""The optional Kueue reads beside quota: Workload objects and the LocalQueue each one names.

`GET /apis/kueue.x-k8s.io/<version>/workloads` and `.../localqueues` (every namespace, paged
like the ClusterQueues). An evicted Workload has released its quota, and with it
`status.admission.clusterQueue`; its LocalQueue's `spec.clusterQueue` names the ClusterQueue
it ran in. A list the API server refuses (no RBAC, an old Kueue, a timeout) makes the part
missing: it never fails the quota read, which feeds money.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import httpx

from exporter.errors import UpstreamError
from exporter.sources.checks import MISSING_FIELD, BadRecord, Tally, label
from exporter.sources.kueue.listing import list_objects
from exporter.sources.kueue.shapes import as_object, as_string
from exporter.sources.kueue.workloads import Scheduling, WorkloadRecord, parse_workloads

__all__ = ["WORKLOADS", "Scheduling", "read_scheduling"]

WORKLOADS = "workloads"
_LOG = logging.getLogger(__name__)


def read_scheduling(client: httpx.Client, version: str, page_size: int) -> Scheduling:
    """Workloads and LocalQueues; a part that cannot be listed is missing, never an error."""
    try:
        items = list_objects(client, version, "workloads", page_size)
        queues = list_objects(client, version, "localqueues", page_size)
    except UpstreamError as exc:
        _LOG.warning("kueue: the Workload part is missing: %s", exc)
        return Scheduling(missing=(WORKLOADS,))
    tally = Tally()
    routes = _routes(queues, tally)
    workloads = tuple(
        w if w.cluster_queue else replace(w, cluster_queue=routes.get(_key(w), ""))
        for w in parse_workloads(items, tally)
    )
    return Scheduling(workloads, (), tally.frozen())


def _key(w: WorkloadRecord) -> tuple[str, str]:
    return (w.namespace, w.local_queue)


def _routes(items: list[Any], tally: Tally) -> dict[tuple[str, str], str]:
    """(namespace, LocalQueue) -> ClusterQueue; a broken LocalQueue is dropped and counted."""
    out: dict[tuple[str, str], str] = {}
    for item in items:
        try:
            obj = as_object(item, "LocalQueue")
            meta = as_object(obj.get("metadata"), "LocalQueue metadata")
            spec = as_object(obj.get("spec"), "LocalQueue spec")
            names = (meta.get("namespace"), meta.get("name"), spec.get("clusterQueue"))
            ns, name, queue = (label(as_string(v, "LocalQueue"), "LocalQueue") for v in names)
            if not (ns and name and queue):
                raise BadRecord(MISSING_FIELD, "a LocalQueue lacks its name or clusterQueue")
        except BadRecord as exc:
            tally.drop(exc)
            continue
        out[(ns, name)] = queue
    return out

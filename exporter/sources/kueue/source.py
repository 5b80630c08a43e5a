"""Kueue source: ClusterQueue quota and usage from the Kubernetes API.

Upstream: `GET /apis/kueue.x-k8s.io/<version>/clusterqueues?limit=N` and `.../resourceflavors`
(both paged with `metadata.continue`); Cohort objects are not read. `api_version: auto` reads
v1beta2 and falls back to v1beta1 when v1beta2 is not served (Kueue < v0.15), mapping
`spec.cohort` to the v1beta2 `cohortName`. Snapshots carry quantities in base units (GPUs as
counts, cores, bytes); an unset limit is +Inf, never 0. ResourceFlavors are read in the same
version, for the node labels that map each flavor's quota to nodes and so to a GPU price.

One ClusterQueue resource with a bad quantity (one ClusterQueue, if the object itself is
broken) is dropped and counted, and fails the refresh: quota feeds the money teams borrow and
lend. Workloads and LocalQueues (`workloads: true`, exporter.sources.kueue.scheduling) are
read after, and a failure there leaves them missing, the quota read whole. A list that does
not add up (fewer items than `remainingItemCount` promised, more pages than it allows, one
queue twice with different contents) fails it too, and so does a list that comes back empty
after holding queues, until a later read says the same.
"""

from __future__ import annotations

from typing import Any

import httpx

from exporter.config.schema import KueueConfig
from exporter.sources.checks import Tally, dedupe, emptiness_of, refuse_dropped
from exporter.sources.kind import SourceKind, nothing_shared
from exporter.sources.kube_client import build_client
from exporter.sources.kueue.clusterqueue import parse_cluster_queue
from exporter.sources.kueue.flavors import parse_resource_flavors
from exporter.sources.kueue.listing import list_objects, list_queues
from exporter.sources.kueue.records import SOURCE, KueueSnapshot, QuotaRecord
from exporter.sources.kueue.scheduling import read_scheduling
from exporter.sources.reading import Reading

__all__ = [
    "KIND",
    "KueueSnapshot",
    "QuotaRecord",
    "build_client",
    "fetch",
    "parse_cluster_queue",
]


def fetch(client: httpx.Client, cfg: KueueConfig, shared: None, reading: Reading) -> KueueSnapshot:
    """Read every ClusterQueue (all pages) into quota records.

    The Kubernetes API answers with the current state: there is no window to ask for, so every
    reading gets the quotas as they are now.
    """
    del shared, reading
    version, items = list_queues(client, cfg)
    tally = Tally()
    # The same ClusterQueue on two pages is kept once; two different versions of it fail.
    unique = dedupe(SOURCE, items, _item_name, tally)
    queues = [record for item in unique for record in parse_cluster_queue(item, version, tally)]
    # Flavors say which nodes (and so which GPU price) each flavor's quota stands for.
    flavors = parse_resource_flavors(
        list_objects(client, version, "resourceflavors", cfg.page_size), tally
    )
    # A quota row dropped would take its borrowed or lent share out of the money it moves.
    refuse_dropped(SOURCE, tally, "ClusterQueue resources or ResourceFlavors")
    lists = {"the ClusterQueue list": bool(items), "the ResourceFlavor list": bool(flavors)}
    emptiness_of(client).check(SOURCE, lists)  # empty after data: wait
    # Workloads are read after quota, and their failure is theirs alone.
    scheduling = read_scheduling(client, version, cfg.page_size) if cfg.workloads else None
    ordered = tuple(sorted(queues, key=_queue_key))
    return KueueSnapshot(ordered, tally.frozen(), flavors, scheduling)


def _item_name(item: Any) -> object:
    # A nameless or broken item gets its own identity here; parsing then drops it.
    meta = item.get("metadata") if isinstance(item, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else ("unnamed", id(item))


def _queue_key(record: QuotaRecord) -> tuple[str, str, str]:
    return (record.cluster_queue, record.flavor, record.resource)


KIND = SourceKind(
    SOURCE, KueueSnapshot, lambda config: config.sources.kueue, nothing_shared, build_client, fetch
)

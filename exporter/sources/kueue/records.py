"""Kueue records: one ClusterQueue's quota per flavor and resource, and one refresh's snapshot."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from exporter.sources.kueue.flavors import FlavorRecord
from exporter.sources.kueue.workloads import Scheduling

__all__ = ["SOURCE", "KueueSnapshot", "QuotaRecord"]

SOURCE = "kueue"


@dataclass(frozen=True)
class QuotaRecord:
    """Quota of one ClusterQueue for one flavor and resource, in base units."""

    cluster_queue: str
    cohort: str  # "" when the queue is in no cohort
    flavor: str
    resource: str
    nominal: float
    borrowing_limit: float = math.inf  # unset = unlimited
    lending_limit: float = math.inf  # unset = all of the unused nominal quota
    usage: float = 0.0  # admitted workloads (status.flavorsUsage)
    borrowed: float = 0.0  # status.flavorsUsage[].resources[].borrowed


@dataclass(frozen=True)
class KueueSnapshot:
    """Every ClusterQueue quota row of one refresh."""

    queues: tuple[QuotaRecord, ...]
    dropped: Mapping[str, int] = field(default_factory=dict)
    flavors: tuple[FlavorRecord, ...] = ()  # ResourceFlavors, sorted by name
    # Workloads for the queue figures; None when not asked for (`sources.kueue.workloads`).
    scheduling: Scheduling | None = None

    def check_after(self, previous: object | None) -> None:
        """A completed list is the whole current state; a list empty after queues waits for a
        second read in fetch, where each client's reads are remembered."""
        del previous

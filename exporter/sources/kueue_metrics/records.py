"""Kueue's metrics as the join reads them: per ClusterQueue and cohort, and the parts missing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["KueueMetrics"]


@dataclass(frozen=True)
class KueueMetrics:
    """What Kueue's metrics say per ClusterQueue (and cohort), and which parts are missing."""

    pending: Mapping[str, float] = field(default_factory=dict)  # cluster_queue
    wait: Mapping[str, Mapping[float, float]] = field(default_factory=dict)  # queue -> le -> n
    admitted: Mapping[str, float] = field(default_factory=dict)
    evicted: Mapping[tuple[str, str], float] = field(default_factory=dict)  # (queue, reason)
    preempted: Mapping[tuple[str, str], float] = field(default_factory=dict)  # preempting queue
    queue_share: Mapping[str, float] = field(default_factory=dict)  # NaN kept: weight 0
    cohort_share: Mapping[str, float] = field(default_factory=dict)
    missing: tuple[str, ...] = ()  # parts with no series or no answer
    dropped: Mapping[str, int] = field(default_factory=dict)

    def check_after(self, previous: object | None) -> None:
        """Kueue's metrics are a current state: any answer stands on its own."""
        del previous

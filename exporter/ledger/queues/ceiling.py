"""Each ClusterQueue's € ceiling: its GPUs at most, nominal plus what it may borrow, priced (pure).

Under the `reservation` idle policy a team pays for its nominal quota whether it runs or not,
and for what it borrows on top; the ceiling is the most that can come to in a month. A queue
borrows at most its `borrowingLimit`, and never more than the rest of its cohort can lend
(each other queue's `min(nominal, lendingLimit)`): so an unset borrowing limit still has a
finite ceiling, and a queue in no cohort cannot borrow at all. Quota held by Cohort objects is
not read, so a queue borrowing from one has a ceiling that is a floor of the truth there.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from exporter.ledger.costs.quota import GPU_RESOURCES, QueueQuota

__all__ = ["QueueCeiling", "queue_ceilings"]


@dataclass(frozen=True)
class QueueCeiling:
    """One ClusterQueue's GPUs (nominal, at most) and what they cost for the month."""

    team: str
    cluster_queue: str
    cohort: str
    nominal_gpus: float
    ceiling_gpus: float  # nominal + what it may borrow
    nominal_cost: float  # nominal x price x the month's hours
    ceiling_cost: float  # ceiling x price x the month's hours
    unpriced_flavors: tuple[str, ...] = ()  # GPU flavors nothing prices: left out of both


def queue_ceilings(
    quota: Iterable[QueueQuota],
    prices: Mapping[str, float],
    hours: float,
    resources: Collection[str] = GPU_RESOURCES,
) -> tuple[QueueCeiling, ...]:
    """The ceiling of every ClusterQueue holding GPU quota, summed over its GPU flavors."""
    rows = [q for q in quota if q.resource in resources]
    lendable: dict[tuple[str, str, str], float] = defaultdict(float)
    for q in rows:
        if q.cohort:
            lendable[(q.cohort, q.flavor, q.resource)] += min(q.nominal, q.lending_limit)
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    meta: dict[str, tuple[str, str]] = {}
    unpriced: dict[str, set[str]] = defaultdict(set)
    for q in rows:
        meta.setdefault(q.cluster_queue, (q.team, q.cohort))
        price = prices.get(q.flavor)
        if price is None:
            unpriced[q.cluster_queue].add(q.flavor)
            continue
        borrowable = _borrowable(q, lendable)
        acc = sums[q.cluster_queue]
        acc[0] += q.nominal
        acc[1] += q.nominal + borrowable
        acc[2] += q.nominal * price * hours
        acc[3] += (q.nominal + borrowable) * price * hours
    out = []
    for queue, (team, cohort) in sorted(meta.items()):
        nominal, ceiling, nominal_cost, ceiling_cost = sums[queue]
        missing = tuple(sorted(unpriced[queue]))
        out.append(
            QueueCeiling(team, queue, cohort, nominal, ceiling, nominal_cost, ceiling_cost, missing)
        )
    return tuple(out)


def _borrowable(q: QueueQuota, lendable: Mapping[tuple[str, str, str], float]) -> float:
    """What the queue may borrow: its limit, within what the rest of its cohort can lend."""
    if not q.cohort:
        return 0.0  # Kueue lets a queue in no cohort borrow nothing
    others = lendable[(q.cohort, q.flavor, q.resource)] - min(q.nominal, q.lending_limit)
    others = max(0.0, others)
    return others if math.isinf(q.borrowing_limit) else min(q.borrowing_limit, others)

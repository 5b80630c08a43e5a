"""Who lent what a Kueue cohort borrowed, now and over the month so far (pure).

The lending rule (the exporter's policy; Kueue reports only what each queue borrows): within a
cohort, per flavor and resource, the total borrowed is apportioned to the queues that have
unused lendable quota, `max(0, min(nominal - usage, lending_limit))`, in proportion to it. No
queue lends more than it has unused, so when queues borrow quota held by Cohort objects (which
the exporter does not read) or by another branch of a cohort tree, lent sums to less than
borrowed; `lending_mismatches` reports that instead of inventing a lender.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.sources.kueue.records import QuotaRecord

__all__ = [
    "LendingMismatch",
    "QueueKey",
    "lend",
    "lendable",
    "lending_mismatches",
    "month_borrowing",
]

QueueKey = tuple[str, str, str]  # (cluster_queue, flavor, resource)
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class LendingMismatch:
    """A cohort, flavor and resource where what was lent differs from what was borrowed."""

    cohort: str
    flavor: str
    resource: str
    borrowed: float
    lent: float


def lendable(record: QuotaRecord) -> float:
    """Unused quota a queue may lend: `max(0, min(nominal - usage, lending_limit))`."""
    return max(0.0, min(record.nominal - record.usage, record.lending_limit))


def lend(queues: Iterable[QuotaRecord]) -> dict[QueueKey, float]:
    """Apportion each cohort's borrowed quota to its queues with lendable quota (see module)."""
    groups: dict[tuple[str, str, str], list[QuotaRecord]] = defaultdict(list)
    for record in queues:
        if record.cohort:  # a queue without a cohort can neither borrow nor lend
            groups[(record.cohort, record.flavor, record.resource)].append(record)
    out: dict[QueueKey, float] = {}
    for records in groups.values():
        borrowed = math.fsum(r.borrowed for r in records)
        pool = math.fsum(lendable(r) for r in records)
        fraction = min(1.0, borrowed / pool) if pool > 0 else 0.0
        for r in records:
            out[(r.cluster_queue, r.flavor, r.resource)] = lendable(r) * fraction
    return out


def lending_mismatches(
    queues: Iterable[QuotaRecord], lent: Mapping[QueueKey, float]
) -> list[LendingMismatch]:
    """Cohorts, flavors and resources where lent != borrowed (1e-9 relative), sorted."""
    sums: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in queues:
        if r.cohort:
            acc = sums[(r.cohort, r.flavor, r.resource)]
            acc[0] += r.borrowed
            acc[1] += lent.get((r.cluster_queue, r.flavor, r.resource), 0.0)
    return [
        LendingMismatch(*key, borrowed, given)
        for key, (borrowed, given) in sorted(sums.items())
        if not math.isclose(borrowed, given, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)
    ]


def month_borrowing(
    nominal: Mapping[str, float],
    used_gpu_hours: Mapping[str, float],
    lending_limits: Mapping[str, float],
    hours: float,
) -> tuple[dict[str, float], dict[str, float]]:
    """Month-to-date (borrowed, lent) GPU-hours per team, from quota and measured use.

    borrowed_t = max(0, used_t - nominal_t x hours). Lendable_t = max(0, min(nominal_t x hours
    - used_t, lending_limit_t x hours)) (an absent lending limit is unlimited). The total
    borrowed is apportioned to lenders in proportion to lendable, never beyond it: lent sums to
    borrowed whenever enough is lendable, else every lender lends all it could. Netting over
    the month is an approximation: a team that borrowed in one week and lent in another shows
    only the balance.
    """
    teams = sorted(set(nominal) | set(used_gpu_hours))
    borrowed: dict[str, float] = {}
    spare: dict[str, float] = {}
    for team in teams:
        held = nominal.get(team, 0.0) * hours
        used = used_gpu_hours.get(team, 0.0)
        borrowed[team] = max(0.0, used - held)
        cap = lending_limits.get(team, math.inf) * hours
        spare[team] = max(0.0, min(held - used, cap))
    need = math.fsum(borrowed.values())
    pool = math.fsum(spare.values())
    fraction = min(1.0, need / pool) if pool > 0 else 0.0
    return borrowed, {team: spare[team] * fraction for team in teams}

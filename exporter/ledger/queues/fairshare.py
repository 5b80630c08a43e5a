"""Fair share against the bill: each team's weighted share beside its share of GPU cost (pure).

Kueue's weighted share (`kueue_cluster_queue_weighted_share`) is, per ClusterQueue, the highest
ratio over its resources of usage above nominal quota to what the cohort can lend, divided by
the queue's fair-sharing weight: 0 at or below nominal. A team with several queues shows the
highest of them, as Kueue itself keeps the highest over resources. The cost share is the team's
part of the month's GPU cost; over every team the cost shares add up to 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["TeamShare", "fair_shares"]


@dataclass(frozen=True)
class TeamShare:
    """One team's weighted share (Kueue's figure) beside its share of the month's GPU cost."""

    team: str
    weighted_share: float | None  # None: no queue reported one (fair sharing off)
    gpu_cost: float
    cost_share: float | None  # None when the month has no GPU cost


def fair_shares(
    weighted: Mapping[str, float],
    gpu_cost: Mapping[str, float],
    team_for_queue: Callable[[str], str],
) -> tuple[TeamShare, ...]:
    """Each team's highest queue weighted share, and its GPU cost over the cluster's."""
    shares: dict[str, float] = {}
    for queue, value in weighted.items():
        team = team_for_queue(queue)
        # NaN (a zero weight while borrowing) is the most unfair share there is.
        value = math.inf if math.isnan(value) else value
        shares[team] = max(shares.get(team, 0.0), value)
    total = math.fsum(gpu_cost.values())
    teams = sorted({*shares, *gpu_cost})
    return tuple(
        TeamShare(
            team,
            shares.get(team),
            gpu_cost.get(team, 0.0),
            _share(gpu_cost.get(team, 0.0), total),
        )
        for team in teams
    )


def _share(cost: float, total: float) -> float | None:
    # A total of a few subnormal cents overflows the quotient: no share is better than inf.
    if not total > 0:
        return None
    share = cost / total
    return share if math.isfinite(share) else None

"""Chargeback: attributed costs plus an idle policy give a ledger per team (pure; conserves money).

Conservation is the invariant every function here keeps: the ledger's sum over all teams,
`__idle__` and `__unallocated__` included, equals the cluster's cost it was given.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import msgspec

from exporter.ledger.attribution import IDLE, OTHER, SHARED, UNALLOCATED, Placement
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.policies import IdleRule

__all__ = [
    "IDLE_RESOURCES",
    "CostLine",
    "Ledger",
    "cap_teams",
    "charge",
    "teams_over_cap",
]

IDLE_RESOURCES: tuple[str, ...] = ("gpu", "cpu", "ram")
RESERVED = frozenset({IDLE, UNALLOCATED, OTHER, SHARED})


class CostLine(msgspec.Struct, frozen=True, gc=False):
    """One allocation's cost by component, already placed on a team.

    A struct, not a frozen dataclass: a window makes one per allocation, and a struct is built
    in C and is smaller.
    """

    placement: Placement
    node: str
    costs: Mapping[str, float]
    namespace: str = ""


@dataclass
class Ledger:
    """Money per (team, component), plus the part placed only through fallback keys."""

    costs: dict[tuple[str, str], float] = field(default_factory=dict)
    fallback: dict[tuple[str, str], float] = field(default_factory=dict)

    def add(self, team: str, component: str, amount: float) -> None:
        """Add an amount to a team's component (zero amounts are kept out)."""
        if amount:
            key = (team, component)
            self.costs[key] = self.costs.get(key, 0.0) + amount

    def total(self) -> float:
        """The sum of every cost in the ledger."""
        return sum(self.costs.values())

    def by_team(self) -> dict[str, dict[str, float]]:
        """Costs nested as team -> component -> amount."""
        out: dict[str, dict[str, float]] = defaultdict(dict)
        for (team, component), amount in self.costs.items():
            out[team][component] = amount
        return dict(out)

    def scaled(self, factor: float) -> Ledger:
        """The same ledger with every amount multiplied (e.g. a window's cost to a rate)."""
        return Ledger(
            {k: v * factor for k, v in self.costs.items()},
            {k: v * factor for k, v in self.fallback.items()},
        )


def charge(
    lines: Iterable[CostLine],
    idle: Mapping[str, Mapping[str, float]],
    rule: IdleRule,
) -> Ledger:
    """Apply an idle policy's rule to attributed costs.

    Args:
        lines: every allocation's costs, placed on teams.
        idle: idle cost per idle group (a node, or "" for the whole cluster) and resource.
        rule: which resources' idle is shared, per group, by usage cost of that resource in
            the same group; the rest stays on `__idle__` (from where, for a rule that charges
            GPU quota, the quota module moves reservations onto the teams that hold them).
    """
    ledger = Ledger()
    costs, fallback = ledger.costs, ledger.fallback
    usage: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    by_node = any(group for group in idle)
    cluster = usage[""]
    # Ledger.add and the usage sums inlined: this loop runs once per allocation, and each
    # addition happens in the same order as before, so every float sum is the same.
    for line in lines:
        placement, line_costs = line.placement, line.costs
        team = placement.team
        for component, amount in line_costs.items():
            if amount:
                key = (team, component)
                costs[key] = costs.get(key, 0.0) + amount
        if placement.via == "fallback":
            key = (team, placement.key)
            fallback[key] = fallback.get(key, 0.0) + sum(line_costs.values())
        group = usage[line.node] if by_node else cluster
        for resource in IDLE_RESOURCES:
            spent = line_costs.get(resource, 0.0)
            if spent > 0:
                teams = group[resource]
                teams[team] = teams.get(team, 0.0) + spent
    for group_name, resources in idle.items():
        for resource, amount in resources.items():
            _place_idle(ledger, amount, resource, usage[group_name][resource], rule)
    return ledger


def _place_idle(
    ledger: Ledger, amount: float, resource: str, users: Mapping[str, float], rule: IdleRule
) -> None:
    total_use = sum(users.values())
    if not rule.shares_idle(resource) or total_use <= 0:
        # Idle nobody used stays visible as idle, under every policy.
        ledger.add(IDLE, resource, amount)
        return
    # Sorted so the floating-point sum never depends on the order upstream JSON came in.
    for team in sorted(users):
        ledger.add(team, Component.IDLE_SHARE, amount * (users[team] / total_use))


def cap_teams(
    ledger: Ledger,
    declared: Iterable[str],
    max_teams: int,
    fold: Iterable[str] | None = None,
) -> tuple[Ledger, list[str]]:
    """Fold undeclared teams beyond `max_teams` into `__other__`; returns the folded names.

    Declared teams are always kept. Undeclared teams are kept by cost (largest first, then
    name), so the cut is deterministic and the biggest spenders stay visible. Pass `fold` to
    fold the same teams as another ledger did (rates follow the month's cut).
    """
    folded = sorted(fold) if fold is not None else teams_over_cap(ledger, declared, max_teams)
    if not folded:
        return ledger, []
    gone = set(folded)
    capped = Ledger()
    for (team, component), amount in sorted(ledger.costs.items()):
        capped.add(OTHER if team in gone else team, component, amount)
    for (team, key), amount in sorted(ledger.fallback.items()):
        target = (OTHER if team in gone else team, key)
        capped.fallback[target] = capped.fallback.get(target, 0.0) + amount
    return capped, folded


def teams_over_cap(ledger: Ledger, declared: Iterable[str], max_teams: int) -> list[str]:
    """The undeclared teams that do not fit under `max_teams`, sorted by name."""
    declared_set = set(declared)
    keep = declared_set | RESERVED
    spend: dict[str, float] = defaultdict(float)
    for (team, _), amount in ledger.costs.items():
        if team not in keep:
            spend[team] += abs(amount)
    room = max(0, max_teams - len(declared_set))
    ranked = sorted(spend, key=lambda t: (-spend[t], t))
    return sorted(ranked[room:])

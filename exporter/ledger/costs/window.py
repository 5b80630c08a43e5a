"""From OpenCost records to ledger windows: place every allocation, split idle, apply the policy.

Pure. A `Window` is one ledger (the hourly rate, or the month to date) with what the later steps
of the join need to know about it; quota and LLM steps take a window and return a new one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.ledger import IDLE_RESOURCES, CostLine, Ledger, charge
from exporter.ledger.costs.policies import IdleRule
from exporter.sources.opencost.snapshot import AllocationSet

__all__ = [
    "Window",
    "WindowMemo",
    "charged",
    "cost_lines",
    "gpu_hours_by_team",
    "gpu_price_per_hour",
    "idle_groups",
    "serving_costs",
    "window",
]


@dataclass(frozen=True)
class Window:
    """One ledger window on its way through the join.

    `ledger` is in the window's unit: money per hour for the hourly window, money for the month
    to date. `scale` turns the window's OpenCost money into that unit (1 / hours, or 1);
    `llm_scale` turns month-to-date LLM spend into it (1 / hours elapsed in the month, or 1).
    A `live` window (the hourly one: it ends now and is short) is described by Kueue's current
    status; otherwise borrowing is measured from the GPU-hours its allocations used.
    """

    allocations: AllocationSet
    lines: tuple[CostLine, ...]
    ledger: Ledger
    llm_scale: float
    live: bool

    @property
    def scale(self) -> float:
        """OpenCost money over the window -> the ledger's unit."""
        return 1.0 / self.allocations.hours if self.live else 1.0

    @property
    def unit_hours(self) -> float:
        """Hours one unit of the ledger covers: 1 for a rate, the window's length for a total."""
        return 1.0 if self.live else self.allocations.hours

    @property
    def cluster_cost(self) -> float:
        """What OpenCost says the whole cluster cost, in the window's unit, before any policy."""
        total = self.allocations.total()
        return total / self.allocations.hours if self.live else total

    def with_ledger(self, ledger: Ledger) -> Window:
        """The same window with a new ledger (each step of the join returns one)."""
        return replace(self, ledger=ledger)


def window(
    allocations: AllocationSet,
    attributor: Attributor,
    rule: IdleRule,
    by_node: bool,
    *,
    live: bool,
    llm_scale: float,
) -> Window:
    """Everything a window costs, per team and component, under an idle policy.

    A live window's ledger is a rate over the window; otherwise it is the window's total.
    """
    lines, ledger = charged(allocations, attributor, rule, by_node)
    return _made(allocations, lines, ledger, live=live, llm_scale=llm_scale)


def charged(
    allocations: AllocationSet, attributor: Attributor, rule: IdleRule, by_node: bool
) -> tuple[tuple[CostLine, ...], Ledger]:
    """Every allocation placed on its team, and the window's total under the idle rule."""
    lines = cost_lines(allocations, attributor)
    return lines, charge(lines, idle_groups(allocations, lines, by_node), rule)


def _made(
    allocations: AllocationSet,
    lines: tuple[CostLine, ...],
    ledger: Ledger,
    *,
    live: bool,
    llm_scale: float,
) -> Window:
    made = Window(allocations, lines, ledger, llm_scale, live)
    return made.with_ledger(ledger.scaled(made.scale)) if live else made


class WindowMemo:
    """The hourly and month windows of the last OpenCost sets charged, reused while the same
    sets (held, so their ids cannot be reused), attributor and idle rule are joined again.

    Each source refreshes on its own interval and every refresh rebuilds: a rebuild after a
    DCGM, Kueue or LiteLLM refresh need not place and charge 100,000 allocations again.
    """

    def __init__(self) -> None:
        # live -> (inputs, window, the window's ledger before it was made a rate)
        self._kept: dict[bool, tuple[tuple[object, ...], Window, Ledger]] = {}
        self._priced: dict[bool, tuple[tuple[object, ...], AllocationSet]] = {}

    def priced(
        self,
        allocations: AllocationSet,
        prices: object,
        make: Callable[[], AllocationSet],
        *,
        live: bool,
    ) -> AllocationSet:
        """`make()`, the set repriced, kept while the same set is repriced at equal prices.

        The repriced set is the one kept, so the window memo then finds it again by identity.
        """
        kept = self._priced.get(live)
        if kept is not None and kept[0][0] is allocations and kept[0][1] == prices:
            return kept[1]
        made = make()
        self._priced[live] = ((allocations, prices), made)
        return made

    def window(
        self,
        allocations: AllocationSet,
        attributor: Attributor,
        rule: IdleRule,
        by_node: bool,
        *,
        live: bool,
        llm_scale: float,
    ) -> Window:
        """`window(...)`, computed when its inputs are not the last ones seen for `live`.

        When the other window was charged from the same set (a window that is the month so
        far, early in a month or in one body read whole), its placing and charging is reused.
        """
        key: tuple[object, ...] = (allocations, attributor, rule, by_node)
        kept = self._kept.get(live)
        if kept is None or not _same(key, kept[0]):
            other = self._kept.get(not live)
            if other is not None and _same(key, other[0]):
                lines, ledger = other[1].lines, other[2]
            else:
                lines, ledger = charged(allocations, attributor, rule, by_node)
            made = _made(allocations, lines, ledger, live=live, llm_scale=llm_scale)
            kept = self._kept[live] = (key, made, ledger)
        # A copy of the ledger: later steps of a join may change theirs in place.
        made = kept[1]
        ledger = Ledger(dict(made.ledger.costs), dict(made.ledger.fallback))
        return replace(made, ledger=ledger, llm_scale=llm_scale)


def _same(key: tuple[object, ...], kept: tuple[object, ...]) -> bool:
    return all(a is b for a, b in zip(key, kept, strict=True))


def cost_lines(window: AllocationSet, attributor: Attributor) -> tuple[CostLine, ...]:
    """Place every allocation of a window on its team."""
    place = attributor.place
    return tuple(
        [
            CostLine(
                place(
                    a.namespace,
                    a.labels,
                    a.namespace_labels,
                    a.annotations,
                    a.namespace_annotations,
                ),
                a.node,
                a.costs,
                a.namespace,
            )
            for a in window.allocations
        ]
    )


def idle_groups(
    window: AllocationSet, lines: Sequence[CostLine], by_node: bool
) -> dict[str, dict[str, float]]:
    """The window's idle cost per idle group ("" = whole cluster, else a node) and resource.

    OpenCost merges all idle into one `__idle__` entry whatever `idleByNode` says, so the
    split by node is ours: each node's share of the reported idle is in proportion to its
    own idle (node asset cost minus what allocations on it cost). Splitting the reported
    total, rather than using the asset figures themselves, keeps the cluster total exact.
    """
    if not by_node or not window.node_costs:
        return {"": dict(window.idle)}
    spent: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for line in lines:
        for resource in IDLE_RESOURCES:
            spent[line.node][resource] += line.costs.get(resource, 0.0)
    groups: dict[str, dict[str, float]] = defaultdict(dict)
    for resource, amount in window.idle.items():
        weights = {
            node: max(0.0, costs.get(resource, 0.0) - spent[node][resource])
            for node, costs in sorted(window.node_costs.items())
        }
        total_weight = sum(weights.values())
        if total_weight <= 0:
            groups[""][resource] = amount
            continue
        for node, weight in weights.items():
            if weight > 0:
                groups[node][resource] = amount * weight / total_weight
    return dict(groups)


def gpu_price_per_hour(window: AllocationSet) -> float | None:
    """The GPU-hour price OpenCost charged in a window (GPU cost / GPU-hours), if any GPU ran."""
    hours = sum(a.gpu_hours for a in window.allocations)
    if hours <= 0:
        return None
    return sum(a.costs.get("gpu", 0.0) for a in window.allocations) / hours


def gpu_hours_by_team(lines: Sequence[CostLine], allocations: AllocationSet) -> dict[str, float]:
    """GPU-hours each team used in a window, placed by the same rules as its cost."""
    hours: dict[str, float] = defaultdict(float)
    for line, a in zip(lines, allocations.allocations, strict=True):
        if a.gpu_hours:
            hours[line.placement.team] += a.gpu_hours
    return dict(hours)


def serving_costs(
    lines: Sequence[CostLine], namespaces: Sequence[str]
) -> dict[str, dict[str, float]]:
    """Cost per serving namespace and the team it was placed on (for LLM re-attribution)."""
    wanted = set(namespaces)
    out: dict[str, dict[str, float]] = {ns: {} for ns in sorted(wanted)}
    for line in lines:
        if line.namespace in wanted:
            teams = out[line.namespace]
            team = line.placement.team
            teams[team] = teams.get(team, 0.0) + sum(line.costs.values())
    return out

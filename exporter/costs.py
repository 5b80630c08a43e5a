"""From OpenCost records to ledgers: place every allocation, split idle, apply the policy (pure)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from exporter.attribution import Attributor
from exporter.chargeback import IDLE_RESOURCES, CostLine, Ledger, charge
from exporter.sources.opencost import AllocationSet

__all__ = [
    "WindowCosts",
    "cost_lines",
    "gpu_price_per_hour",
    "idle_groups",
    "serving_costs",
    "window_costs",
]


@dataclass(frozen=True)
class WindowCosts:
    """A window's ledger (money over the whole window), its lines, and its length in hours."""

    ledger: Ledger
    lines: tuple[CostLine, ...]
    hours: float
    cluster_total: float


def cost_lines(window: AllocationSet, attributor: Attributor) -> tuple[CostLine, ...]:
    """Place every allocation of a window on its team."""
    return tuple(
        CostLine(
            attributor.place(a.namespace, a.labels, a.namespace_labels),
            a.node,
            a.costs,
            a.namespace,
        )
        for a in window.allocations
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


def window_costs(
    window: AllocationSet, attributor: Attributor, policy: str, by_node: bool
) -> WindowCosts:
    """Everything a window costs, per team and component, under an idle policy."""
    lines = cost_lines(window, attributor)
    ledger = charge(lines, idle_groups(window, lines, by_node), policy)
    return WindowCosts(ledger, lines, window.hours, window.total())


def gpu_price_per_hour(window: AllocationSet) -> float | None:
    """The GPU-hour price OpenCost charged in a window (GPU cost / GPU-hours), if any GPU ran."""
    hours = sum(a.gpu_hours for a in window.allocations)
    if hours <= 0:
        return None
    return sum(a.costs.get("gpu", 0.0) for a in window.allocations) / hours


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

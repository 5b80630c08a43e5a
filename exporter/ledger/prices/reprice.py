"""OpenCost's GPU cost at the GPU-hour price the config governs: used and idle hours alike (pure).

A price the config sets or builds (`gpu_flavor_prices`, `gpu_prices`, their builds) governs every
GPU-hour of the nodes it prices. A node's governing price is its GPU flavor's (the Kueue GPU
flavor that selects it, see `GpuPrices.flavor_of_node`), else its GPU model's; a node neither
names keeps OpenCost's charge. Every step of the join then sees one price per GPU-hour, so no
policy books the gap between two prices on a team or on `__idle__`.

- An allocation's GPU cost becomes its GPU-hours (OpenCost's `gpuHours`) x the governing price.
- Idle GPU cost carries no GPU-hours in OpenCost; its hours are its cost over OpenCost's own
  price on the nodes it sits on. With node costs (`idle_by_node`), each node's idle is repriced
  at its own ratio, governing price / OpenCost's; otherwise at the ratio of the allocations'
  repriced GPU cost to OpenCost's (one price for the cluster makes that exact), else of the node
  assets'.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import msgspec

from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.snapshot import AllocationSet, GpuNode

__all__ = ["NodePrice", "reprice"]

NodePrice = Callable[[str, str], float | None]  # (node, OpenCost's gpuModel) -> governing price


def reprice(
    window: AllocationSet, price: NodePrice, assets: Sequence[GpuNode] | None = None
) -> AllocationSet:
    """The window with every GPU-hour a governing price names charged at that price."""
    own = _own_prices(window, assets)
    allocations = tuple(_allocation(a, price) for a in window.allocations)
    ratio = _ratio(window, allocations, own, price, assets)
    idle_gpu = window.idle.get("gpu", 0.0)
    node_costs = window.node_costs
    if node_costs and idle_gpu:
        idle_gpu, node_costs = _by_node(window, own, price, ratio)
    elif idle_gpu:
        idle_gpu *= ratio
    idle = {**window.idle, "gpu": idle_gpu} if "gpu" in window.idle else dict(window.idle)
    return replace(window, allocations=allocations, idle=idle, node_costs=node_costs)


def _allocation(a: Allocation, price: NodePrice) -> Allocation:
    if a.gpu_hours <= 0:
        return a
    governing = price(a.node, a.gpu_model)
    if governing is None:
        return a
    return msgspec.structs.replace(a, costs={**a.costs, "gpu": a.gpu_hours * governing})


def _own_prices(window: AllocationSet, assets: Sequence[GpuNode] | None) -> dict[str, float]:
    """OpenCost's GPU-hour price per node: its allocations in this window, else its assets."""
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for a in window.allocations:
        if a.gpu_hours > 0:
            acc = sums[a.node]
            acc[0] += a.costs.get("gpu", 0.0)
            acc[1] += a.gpu_hours
    out = {node: cost / hours for node, (cost, hours) in sums.items() if cost > 0}
    for asset in assets or ():
        found = asset.price
        if asset.name not in out and found is not None and found > 0:
            out[asset.name] = found
    return out


def _ratio(
    window: AllocationSet,
    repriced: Sequence[Allocation],
    own: Mapping[str, float],
    price: NodePrice,
    assets: Sequence[GpuNode] | None,
) -> float:
    """Governing over OpenCost's GPU money, where the GPU-hours ran (else on the assets)."""
    before = after = 0.0
    for old, new in zip(window.allocations, repriced, strict=True):
        if old.gpu_hours > 0:
            before += old.costs.get("gpu", 0.0)
            after += new.costs.get("gpu", 0.0)
    if before > 0:
        return after / before
    for asset in assets or ():
        if asset.gpu_hours > 0 and asset.name in own:
            governing = price(asset.name, "")
            before += asset.gpu_cost
            after += asset.gpu_cost if governing is None else asset.gpu_hours * governing
    return after / before if before > 0 else 1.0


def _by_node(
    window: AllocationSet, own: Mapping[str, float], price: NodePrice, ratio: float
) -> tuple[float, dict[str, dict[str, float]]]:
    """Idle GPU repriced per node, in the shares `idle_groups` will split it by."""
    spent: dict[str, float] = defaultdict(float)
    for a in window.allocations:
        spent[a.node] += a.costs.get("gpu", 0.0)
    weights: dict[str, float] = {}
    ratios: dict[str, float] = {}
    node_costs: dict[str, dict[str, float]] = {}
    for node, costs in sorted(window.node_costs.items()):
        governing, charged = price(node, ""), own.get(node)
        # A node no price governs keeps OpenCost's; one whose own price is unknown, the ratio.
        mine = 1.0 if governing is None else ratio if charged is None else governing / charged
        ratios[node] = mine
        weights[node] = max(0.0, costs.get("gpu", 0.0) - spent[node])
        node_costs[node] = (
            {**costs, "gpu": costs.get("gpu", 0.0) * mine} if "gpu" in costs else dict(costs)
        )
    total = sum(weights.values())
    idle = window.idle.get("gpu", 0.0)
    if total <= 0:
        return idle * ratio, node_costs
    return sum(idle * w / total * ratios[n] for n, w in weights.items()), node_costs

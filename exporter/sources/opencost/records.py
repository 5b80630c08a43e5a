"""The compact record of one OpenCost allocation that the join reads, and its sums over sets.

An allocation keeps only what the join, the checks and the FOCUS export read: names, labels,
the cost of each component, GPU-hours, the GPU model and what was consumed (`USAGE_FIELDS`).
The sets of a window (or of the month's days) add up by name, in read order, so every float is
the same whichever way the sets arrive.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import msgspec

__all__ = [
    "COMPONENT_FIELDS",
    "EMPTY",
    "EMPTY_USAGE",
    "USAGE_FIELDS",
    "Allocation",
    "Meta",
    "Packed",
    "Totals",
    "component_costs",
    "merge_into",
    "meta_of",
    "one_model",
    "usage_map",
]

# One empty map for every allocation without labels, annotations or usage (most have no
# annotations): an empty dict apiece is 64 bytes, 100,000 of them at 50,000 allocations.
# Typed read-only: never mutated.
EMPTY: Mapping[str, str] = {}
EMPTY_USAGE: Mapping[str, float] = {}

# Component -> the OpenCost fields that add up to it (cost plus its adjustment).
COMPONENT_FIELDS: dict[str, tuple[str, ...]] = {
    "gpu": ("gpuCost", "gpuCostAdjustment"),
    "cpu": ("cpuCost", "cpuCostAdjustment"),
    "ram": ("ramCost", "ramCostAdjustment"),
    "storage": ("pvCost", "pvCostAdjustment"),
    "network": ("networkCost", "networkCostAdjustment"),
    "other": (
        "loadBalancerCost",
        "loadBalancerCostAdjustment",
        "sharedCost",
        "externalCost",
    ),
}
# Component -> the OpenCost field that measures what it consumed: core-hours, byte-hours, bytes
# sent (network cost is egress). The other components have no meter in an allocation.
USAGE_FIELDS: dict[str, str] = {
    "cpu": "cpuCoreHours",
    "ram": "ramByteHours",
    "storage": "pvByteHours",
    "network": "networkTransferBytes",
}


class Allocation(msgspec.Struct, frozen=True, gc=False):
    """One OpenCost allocation (a controller's pods on a node) and what it cost in the window.

    A frozen struct rather than a frozen dataclass: one is built per record, and a struct is
    built in C where a frozen dataclass sets each field through object.__setattr__.
    """

    name: str  # OpenCost's key, node/namespace/controller: the sets of a window merge by it
    namespace: str
    node: str
    labels: Mapping[str, str]
    namespace_labels: Mapping[str, str]
    costs: Mapping[str, float]
    gpu_hours: float
    # gpuAllocation.gpuModel (DCGM's modelName, as OpenCost saw it); "" when absent or mixed.
    gpu_model: str = ""
    # What it consumed, by component (USAGE_FIELDS); a component it did not consume is absent.
    usage: Mapping[str, float] = {}
    # properties.annotations and namespaceAnnotations: kept on an aggregate with
    # includeAggregatedMetadata=true (the members' common ones); read for dimensions.
    annotations: Mapping[str, str] = {}
    namespace_annotations: Mapping[str, str] = {}


# What a name keeps of the first allocation read for it: name, namespace, node, labels,
# namespace labels, annotations, namespace annotations.
Meta = tuple[
    str, str, str, Mapping[str, str], Mapping[str, str], Mapping[str, str], Mapping[str, str]
]


def meta_of(a: Allocation) -> Meta:
    """The names and label maps of an allocation (its figures left out)."""
    return (
        a.name,
        a.namespace,
        a.node,
        a.labels,
        a.namespace_labels,
        a.annotations,
        a.namespace_annotations,
    )


class _Sum(msgspec.Struct, gc=False):
    """A name that more than one set holds: its first labels and the running sums.

    Untracked by the collector (a struct with gc=False, sums in a C array of doubles): one is
    held per allocation of a month, and tracked objects of that number make the collector's
    full passes cost more than the sums themselves.
    """

    first: Meta
    costs: array[float]
    hours: float
    model: str
    usage: dict[str, float]


class Packed(Protocol):
    """Allocations kept packed by name (packed.PackedAllocations), unpacked one at a time."""

    def names(self) -> Iterable[str]:
        """Every name held."""
        ...

    def allocation(self, name: str) -> Allocation:
        """The allocation of `name`."""
        ...

    def sums(self, name: str) -> tuple[Meta, array[float], float, str, dict[str, float]] | None:
        """The first labels, costs, GPU-hours, model and usage of `name` (None: not held)."""
        ...


class Totals:
    """Allocations of one or more reads summed by name on top of a base, built once at the end.

    A name held by one set stays the Allocation decoded for it; a name that another set adds
    to becomes running sums, so no Allocation is built per set and name only to be summed
    away. Sums run in read order (base, then each set), so every float is what adding the
    sets' Allocations one by one gives.
    """

    def __init__(
        self,
        base: Mapping[str, Allocation] | Packed | None = None,
        idle: Mapping[str, float] | None = None,
    ) -> None:
        # A packed base (closed days) is unpacked name by name, only as sets add to it.
        self._by_name: dict[str, Allocation | _Sum] = {}
        self._packed: Packed | None = None
        if base is None or isinstance(base, Mapping):
            self._by_name.update(base or {})
        else:
            self._packed = base
        self.idle: dict[str, float] = dict(idle or {})
        self.has_data = False  # an allocation or a non-zero idle cost was added
        # One copy of each namespace, node and namespace label map across every set: each
        # allocation of a namespace or node repeats them (a fifth of what a set holds).
        self.shared: dict[Any, Any] = {}

    def add(
        self,
        name: str,
        costs: tuple[float, ...],
        hours: float,
        model: str,
        usage: Mapping[str, float] | None = None,
    ) -> bool:
        """Add one record's costs (COMPONENT_FIELDS order), GPU-hours, model and usage to `name`.

        False, and nothing added, when no set held the name yet: `put` its Allocation then.
        """
        entry = self._by_name.get(name)
        if entry is None:
            held = None if self._packed is None else self._packed.sums(name)
            if held is None:
                return False
            entry = self._by_name[name] = _Sum(*held)
        self.has_data = True
        if isinstance(entry, _Sum):
            sums = entry.costs
            for i, amount in enumerate(costs):
                sums[i] += amount
            entry.hours += hours
            entry.model = one_model(entry.model, model)
            _add_usage(entry.usage, usage)
        else:
            base = entry.costs
            pairs = zip(COMPONENT_FIELDS, costs, strict=True)
            sums = array("d", [base.get(c, 0.0) + amount for c, amount in pairs])
            merged = one_model(entry.gpu_model, model)
            summed = dict(entry.usage)
            _add_usage(summed, usage)
            first = meta_of(entry)
            self._by_name[name] = _Sum(first, sums, entry.gpu_hours + hours, merged, summed)
        return True

    def put(self, allocation: Allocation) -> None:
        """Hold a name no set held yet."""
        self.has_data = True
        self._by_name[allocation.name] = allocation

    def add_idle(self, idle: Mapping[str, float]) -> None:
        """Add one set's idle cost per resource."""
        for resource, amount in idle.items():
            self.idle[resource] = self.idle.get(resource, 0.0) + amount
        self.has_data = self.has_data or any(idle.values())

    def build(self) -> dict[str, Allocation]:
        """Every allocation by name, sums built into Allocations (first labels kept)."""
        built = {name: _built(entry) for name, entry in self._by_name.items()}
        if self._packed is not None:
            for name in self._packed.names():
                if name not in built:
                    built[name] = self._packed.allocation(name)
        return built


def component_costs(
    gpu: float, cpu: float, ram: float, storage: float, network: float, other: float
) -> Mapping[str, float]:
    """The costs map of an allocation (COMPONENT_FIELDS order): the components that cost
    something, as everything that reads it takes a missing component for 0.

    Most allocations leave storage, network and other (and a CPU workload its GPU) at 0: a map
    of six is twice the memory of one of up to five, for each of 50,000 allocations a set.
    """
    costs: dict[str, float] = {}
    if gpu:
        costs["gpu"] = gpu
    if cpu:
        costs["cpu"] = cpu
    if ram:
        costs["ram"] = ram
    if storage:
        costs["storage"] = storage
    if network:
        costs["network"] = network
    if other:
        costs["other"] = other
    return costs or EMPTY_USAGE


def usage_map(
    cpu: float | None, ram: float | None, storage: float | None, network: float | None
) -> dict[str, float]:
    """A new usage map (USAGE_FIELDS order) of what was consumed: 0 or missing is not used."""
    usage: dict[str, float] = {}
    if cpu:
        usage["cpu"] = cpu
    if ram:
        usage["ram"] = ram
    if storage:
        usage["storage"] = storage
    if network:
        usage["network"] = network
    return usage


def _add_usage(into: dict[str, float], usage: Mapping[str, float] | None) -> None:
    for component, amount in (usage or {}).items():
        into[component] = into.get(component, 0.0) + amount


def _built(entry: Allocation | _Sum) -> Allocation:
    if isinstance(entry, Allocation):
        return entry
    name, namespace, node, labels, ns_labels, annotations, ns_annotations = entry.first
    costs = component_costs(*entry.costs)
    return Allocation(
        name,
        namespace,
        node,
        labels,
        ns_labels,
        costs,
        entry.hours,
        entry.model,
        entry.usage,
        annotations,
        ns_annotations,
    )


def merge_into(merged: dict[str, Allocation], more: Iterable[Allocation]) -> None:
    """Add allocations to `merged` by name: costs and GPU-hours add up, the first labels stay."""
    for allocation in more:
        first = merged.get(allocation.name)
        merged[allocation.name] = allocation if first is None else _sum(first, allocation)


def one_model(a: str, b: str) -> str:
    """The GPU model of a name over two sets: one unnamed says nothing, two that disagree
    make it unknown ("")."""
    if not a or not b:
        return a or b
    return a if a == b else ""


def _sum(a: Allocation, b: Allocation) -> Allocation:
    costs = component_costs(*(a.costs.get(c, 0.0) + b.costs.get(c, 0.0) for c in COMPONENT_FIELDS))
    hours, model = a.gpu_hours + b.gpu_hours, one_model(a.gpu_model, b.gpu_model)
    usage = dict(a.usage)
    _add_usage(usage, b.usage)
    return Allocation(
        a.name,
        a.namespace,
        a.node,
        a.labels,
        a.namespace_labels,
        costs,
        hours,
        model,
        usage,
        a.annotations,
        a.namespace_annotations,
    )

"""Allocations summed by name and kept as columns: the closed days a month reader holds.

A closed day's costs never change, so the reader keeps them between refreshes for the month.
As Allocation objects, each with its maps of costs and usage, 50,000 of them are tens of
megabytes beside the set each refresh builds; as one array of doubles (costs, GPU-hours and
usage, a row per name) and one tuple of shared strings and label maps per name, they are a
fraction of that, and only the names a refresh needs are unpacked.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

from exporter.sources.opencost.records import (
    COMPONENT_FIELDS,
    EMPTY_USAGE,
    USAGE_FIELDS,
    Allocation,
    Meta,
    component_costs,
    meta_of,
    one_model,
    usage_map,
)

__all__ = ["PackedAllocations"]

_COSTS = len(COMPONENT_FIELDS)
_HOURS = _COSTS  # the row's GPU-hours, after its costs
_USAGE = _COSTS + 1  # then what was consumed, USAGE_FIELDS order (0: nothing)
_WIDTH = _USAGE + len(USAGE_FIELDS)


class PackedAllocations:
    """Allocations by name, packed: the first labels of each name, and its summed figures.

    Folding in more allocations sums them as `records.merge_into` does, in the same order, so
    every float unpacked is the one the Allocations would have held. Costs unpack with every
    component (as decoded and summed allocations have them) and usage with what was consumed.
    """

    __slots__ = ("_index", "_meta", "_models", "_numbers")

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._meta: list[Meta] = []
        self._models: list[str] = []
        self._numbers = array("d")

    @classmethod
    def of(cls, allocations: Iterable[Allocation]) -> PackedAllocations:
        """Pack allocations of distinct names."""
        packed = cls()
        for allocation in allocations:
            packed._append(allocation)
        return packed

    def __len__(self) -> int:
        return len(self._meta)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def names(self) -> Iterator[str]:
        """Every name, in the order first packed."""
        return iter(self._index)

    def allocation(self, name: str) -> Allocation:
        """The allocation of `name` (KeyError when it is not packed)."""
        return self._unpacked(self._index[name])

    def allocations(self) -> Iterator[Allocation]:
        """Every allocation, in the order first packed, unpacked one at a time."""
        return (self._unpacked(i) for i in range(len(self._meta)))

    def sums(self, name: str) -> tuple[Meta, array[float], float, str, dict[str, float]] | None:
        """The running sums `records.Totals` continues from for `name` (None: not packed): its
        first labels, costs, GPU-hours, model and usage."""
        i = self._index.get(name)
        if i is None:
            return None
        numbers, start = self._numbers, i * _WIDTH
        costs = numbers[start : start + _COSTS]
        return self._meta[i], costs, numbers[start + _HOURS], self._models[i], _usage(numbers, i)

    def folded(self, more: Iterable[Allocation]) -> PackedAllocations:
        """A copy with `more` added by name: figures summed, the first labels kept."""
        packed = PackedAllocations()
        packed._index = dict(self._index)
        packed._meta = list(self._meta)
        packed._models = list(self._models)
        packed._numbers = array("d", self._numbers)
        for allocation in more:
            i = packed._index.get(allocation.name)
            if i is None:
                packed._append(allocation)
            else:
                packed._add(i, allocation)
        return packed

    def _append(self, a: Allocation) -> None:
        self._index[a.name] = len(self._meta)
        self._meta.append(meta_of(a))
        self._models.append(a.gpu_model)
        self._numbers.extend(_figures(a))

    def _add(self, i: int, a: Allocation) -> None:
        numbers, start = self._numbers, i * _WIDTH
        for offset, amount in enumerate(_figures(a)):
            numbers[start + offset] += amount
        self._models[i] = one_model(self._models[i], a.gpu_model)

    def _row(self, i: int) -> array[float]:
        return self._numbers[i * _WIDTH : (i + 1) * _WIDTH]

    def _unpacked(self, i: int) -> Allocation:
        row = self._row(i)
        name, namespace, node, labels, ns_labels, annotations, ns_annotations = self._meta[i]
        return Allocation(
            name,
            namespace,
            node,
            labels,
            ns_labels,
            component_costs(*row[:_COSTS]),
            row[_HOURS],
            self._models[i],
            _usage(self._numbers, i) or EMPTY_USAGE,
            annotations,
            ns_annotations,
        )


def _figures(a: Allocation) -> tuple[float, ...]:
    # Spelt out rather than looped: it runs once per allocation packed or folded.
    costs, usage = a.costs.get, a.usage.get
    return (
        costs("gpu", 0.0),
        costs("cpu", 0.0),
        costs("ram", 0.0),
        costs("storage", 0.0),
        costs("network", 0.0),
        costs("other", 0.0),
        a.gpu_hours,
        usage("cpu", 0.0),
        usage("ram", 0.0),
        usage("storage", 0.0),
        usage("network", 0.0),
    )


def _usage(numbers: array[float], i: int) -> dict[str, float]:
    # Usage is never negative and only what was consumed is kept: 0 is a component not used.
    start = i * _WIDTH + _USAGE
    cpu, ram, storage, network = numbers[start : start + len(USAGE_FIELDS)]
    return usage_map(cpu, ram, storage, network)

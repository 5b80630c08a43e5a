"""Allocations summed by name and kept as columns: the closed days a month reader holds.

A closed day's costs never change, so the reader keeps them between refreshes for the month.
As Allocation objects, each with its maps of costs and usage, 50,000 of them are tens of
megabytes beside the set each refresh builds; as one array of doubles (costs, GPU-hours and
usage, a row per name) and one tuple of shared strings and label maps per name, they are a
fraction of that, and only the names a refresh needs are unpacked.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping

from exporter.sources.opencost.records import (
    COMPONENT_FIELDS,
    EMPTY_USAGE,
    USAGE_FIELDS,
    Allocation,
    component_costs,
    one_model,
)

__all__ = ["PackedAllocations"]

_COSTS = len(COMPONENT_FIELDS)
_HOURS = _COSTS  # the row's GPU-hours, after its costs
_USAGE = _COSTS + 1  # then what was consumed, USAGE_FIELDS order (0: nothing)
_WIDTH = _USAGE + len(USAGE_FIELDS)

# name, namespace, node, labels, namespace labels, annotations, namespace annotations
_Meta = tuple[
    str, str, str, Mapping[str, str], Mapping[str, str], Mapping[str, str], Mapping[str, str]
]


class PackedAllocations:
    """Allocations by name, packed: the first labels of each name, and its summed figures.

    Folding in more allocations sums them as `records.merge_into` does, in the same order, so
    every float unpacked is the one the Allocations would have held. Costs unpack with every
    component (as decoded and summed allocations have them) and usage with what was consumed.
    """

    __slots__ = ("_index", "_meta", "_models", "_numbers")

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._meta: list[_Meta] = []
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

    def sums(self, name: str) -> tuple[Allocation, array[float], float, str, dict[str, float]]:
        """The running sums `records.Totals` continues from for `name`: its first labels (an
        Allocation whose figures are not read), costs, GPU-hours, model and usage."""
        i = self._index[name]
        row = self._row(i)
        name, namespace, node, labels, ns_labels, annotations, ns_annotations = self._meta[i]
        figures = EMPTY_USAGE  # the first's own figures: the sums stand for them
        first = Allocation(
            name,
            namespace,
            node,
            labels,
            ns_labels,
            figures,
            0.0,
            "",
            figures,
            annotations,
            ns_annotations,
        )
        return first, row[:_COSTS], row[_HOURS], self._models[i], _usage(row)

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
        self._meta.append(
            (
                a.name,
                a.namespace,
                a.node,
                a.labels,
                a.namespace_labels,
                a.annotations,
                a.namespace_annotations,
            )
        )
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
            _usage(row) or EMPTY_USAGE,
            annotations,
            ns_annotations,
        )


def _figures(a: Allocation) -> list[float]:
    costs, usage = a.costs, a.usage
    return [
        *(costs.get(c, 0.0) for c in COMPONENT_FIELDS),
        a.gpu_hours,
        *(usage.get(u, 0.0) for u in USAGE_FIELDS),
    ]


def _usage(row: array[float]) -> dict[str, float]:
    # Usage is never negative and only what was consumed is kept: 0 is a component not used.
    return {u: v for u, v in zip(USAGE_FIELDS, row[_USAGE:], strict=True) if v}

"""Cents moved within cells so that every dimension's sums meet `report --by NAME`'s cells.

Each cell (a team's component) is split over combinations of dimension values, each share its
exact amount rounded down or up. A move takes a cent from a share rounded up to one rounded
down in the same cell: the cell and the bounds hold, and each dimension where the two
combinations differ sees one value lose a cent and another gain it. The search takes a move
that brings the dimensions' sums closer to their targets, else a pair of moves that does
together (one dimension fixed by the first and the other by the second), else a chain of moves
through one dimension's values from one over its target to one under it (an augmenting path),
until none is left. Every step gains, so it ends.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

__all__ = ["Share", "aim"]

_Cell = tuple[str, str]  # (team, component)
_Move = tuple[_Cell, int, int]  # a cent from share i to share j of the cell


@dataclass(frozen=True)
class Share:
    """One combination's part of a cell: its values, its cents and its weight (for quantities)."""

    combination: tuple[str, ...]
    cents: int
    weight: float


def aim(
    cells: dict[_Cell, list[Share]],
    exact: Mapping[_Cell, Sequence[Decimal]],
    targets: Sequence[Mapping[tuple[str, str], int]],
    component: str,
) -> None:
    """Move cents within the component's cells (in place) towards the targets' sums."""
    keys = sorted(k for k in cells if k[1] == component)
    if not targets or not any(len(cells[k]) > 1 for k in keys):
        return
    _Search(cells, exact, targets, component, keys).run()


class _Search:
    def __init__(
        self,
        cells: dict[_Cell, list[Share]],
        exact: Mapping[_Cell, Sequence[Decimal]],
        targets: Sequence[Mapping[tuple[str, str], int]],
        component: str,
        keys: list[_Cell],
    ) -> None:
        self.cells, self.exact = cells, exact
        self.keys = [k for k in keys if len(cells[k]) > 1]
        self.off: list[dict[str, int]] = []
        self.touching: dict[tuple[int, str], list[_Cell]] = defaultdict(list)
        for d, aimed in enumerate(targets):
            sums: dict[str, int] = defaultdict(int)
            for (value, comp), cents in aimed.items():
                if comp == component:
                    sums[value] -= cents
            for key in keys:
                for share in cells[key]:
                    sums[share.combination[d]] += share.cents
            self.off.append(sums)
        for key in keys:
            if len(cells[key]) > 1:
                for d, v in sorted(
                    {(d, v) for s in cells[key] for d, v in enumerate(s.combination)}
                ):
                    self.touching[(d, v)].append(key)

    def run(self) -> None:
        while self._improve() or self._chain() or self._path():
            pass

    def _near(self) -> list[_Cell]:
        """The cells holding a value whose sum is off its target."""
        found = {
            key
            for d, sums in enumerate(self.off)
            for v, gap in sums.items()
            if gap
            for key in self.touching.get((d, v), ())
        }
        return sorted(found)

    def _moves(self, key: _Cell) -> Iterator[_Move]:
        shares, exact = self.cells[key], self.exact[key]
        ups = [i for i, s in enumerate(shares) if s.cents > exact[i]]
        downs = [j for j, s in enumerate(shares) if s.cents < exact[j]]
        for i in ups:
            for j in downs:
                yield key, i, j

    def _improve(self) -> bool:
        for key in self._near():
            for move in self._moves(key):
                if self._gain(move) > 0:
                    self._apply(move, 1)
                    return True
        return False

    def _chain(self) -> bool:
        for key in self._near():
            for first in list(self._moves(key)):
                if self._gain(first) != 0:
                    continue
                self._apply(first, 1)
                if self._improve():
                    return True
                self._apply(first, -1)
        return False

    def _path(self) -> bool:
        """A chain of moves through one dimension's values, each between two combinations
        that differ there alone, from a value over its target to one under it: the values
        between keep their sums, and no other dimension moves (an augmenting path)."""
        for d, sums in enumerate(self.off):
            if not any(gap > 0 for gap in sums.values()) or not any(
                gap < 0 for gap in sums.values()
            ):
                continue
            edges: dict[str, list[tuple[_Move, str]]] = defaultdict(list)
            for key in self.keys:
                shares = self.cells[key]
                for move in self._moves(key):
                    a, b = shares[move[1]].combination, shares[move[2]].combination
                    if a[d] != b[d] and all(
                        x == y for e, (x, y) in enumerate(zip(a, b, strict=True)) if e != d
                    ):
                        edges[a[d]].append((move, b[d]))
            came: dict[str, tuple[_Move, str] | None] = {
                v: None for v, gap in sums.items() if gap > 0
            }
            queue = sorted(came)
            while queue:
                value = queue.pop(0)
                for move, to in edges.get(value, ()):
                    if to in came:
                        continue
                    came[to] = (move, value)
                    if sums.get(to, 0) < 0:
                        self._walk(came, to)
                        return True
                    queue.append(to)
        return False

    def _walk(self, came: Mapping[str, tuple[_Move, str] | None], end: str) -> None:
        step = came[end]
        while step is not None:
            move, before = step
            self._apply(move, 1)
            step = came[before]

    def _gain(self, move: _Move) -> int:
        key, i, j = move
        a, b = self.cells[key][i].combination, self.cells[key][j].combination
        gain = 0
        for d, (va, vb) in enumerate(zip(a, b, strict=True)):
            if va != vb:
                da, db = self.off[d].get(va, 0), self.off[d].get(vb, 0)
                gain += abs(da) + abs(db) - abs(da - 1) - abs(db + 1)
        return gain

    def _apply(self, move: _Move, cents: int) -> None:
        """Move `cents` from share i to share j (-1 undoes a move)."""
        key, i, j = move
        shares = self.cells[key]
        a, b = shares[i], shares[j]
        for d, (va, vb) in enumerate(zip(a.combination, b.combination, strict=True)):
            if va != vb:
                self.off[d][va] = self.off[d].get(va, 0) - cents
                self.off[d][vb] = self.off[d].get(vb, 0) + cents
        shares[i] = Share(a.combination, a.cents - cents, a.weight)
        shares[j] = Share(b.combination, b.cents + cents, b.weight)

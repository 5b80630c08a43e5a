"""Rounding to the cent so that every printed row and column adds up to its printed total.

Rounding each figure on its own makes a column of team rows add to 45.21 under a total of
45.22. Here the grand total is the exact sum rounded once (half away from zero); each team's
total, each component's total and each cell is the figure's floor or ceiling to the cent, and
the cells of every row and of every column add up exactly to that row's and column's total.

Such a rounding always exists for a two-way table (the constraints form a transportation
network, whose vertices are integral: Cox and Ernst's controlled rounding), but the row totals
chosen by largest remainder and the column totals chosen by largest remainder cannot always be
met at once. The choice is made by a minimum-cost flow of the cents to round up, in this order
of priority: every row total is its largest-remainder rounding against the grand total whenever
any footing rounding allows it (team bills come first), then every column total is, then cells
round to the nearest cent. Ties are broken by position (first row, first column first).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["Footed", "cents", "foot", "largest_remainder"]

_CELL_SCALE = 10**6  # a cell's preference, in millionths of a cent


def cents(amount: float | Decimal) -> Decimal:
    """An amount of money as exact cents: the float's shortest repr, so 0.1 is 10, not 10.000…1."""
    value = amount if isinstance(amount, Decimal) else Decimal(repr(amount))
    return value * 100


def round_cents(value: Decimal) -> int:
    """Exact cents rounded once to a whole cent, halves away from zero."""
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def largest_remainder(values: Sequence[Decimal], total: int) -> list[int]:
    """Round each value down or up so they add to `total`: largest remainders go up first.

    `total` must lie between the sums of the floors and of the ceilings. Equal remainders go
    to the earlier value, so the result never depends on anything but the order given.
    """
    floors = [math.floor(v) for v in values]
    extra = total - sum(floors)
    if not 0 <= extra <= sum(1 for v, f in zip(values, floors, strict=True) if v != f):
        raise ValueError(f"{total} cannot be reached by rounding {list(values)}")
    ranked = sorted(range(len(values)), key=lambda i: (floors[i] - values[i], i))
    for i in ranked[:extra]:
        floors[i] += 1
    return floors


@dataclass(frozen=True)
class Footed:
    """A table rounded to whole cents: cells, row totals, column totals and the grand total."""

    cells: tuple[tuple[int, ...], ...]
    rows: tuple[int, ...]
    columns: tuple[int, ...]
    total: int


def foot(table: Sequence[Sequence[Decimal]]) -> Footed:
    """Round a table of exact cents (rows x columns) so that rows and columns foot."""
    n = len(table)
    m = len(table[0]) if table else 0
    exact_total = sum((v for row in table for v in row), Decimal(0))
    grand = round_cents(exact_total)
    floors = [[math.floor(v) for v in row] for row in table]
    row_sums = [sum(row, Decimal(0)) for row in table]
    col_sums = [sum((table[i][j] for i in range(n)), Decimal(0)) for j in range(m)]
    want_rows = largest_remainder(row_sums, grand)
    want_cols = largest_remainder(col_sums, grand)
    flow = _Flow(n + m + 2)
    source, sink = 0, n + m + 1
    cells = [(i, j) for i in range(n) for j in range(m) if table[i][j] != floors[i][j]]
    # Each weight outweighs everything below it: one row's choice beats every column's and
    # cell's, one column's beats every cell's, and a floor beats all.
    cell_span = 2 * len(cells) * _CELL_SCALE
    w_col = cell_span + 1
    w_row = 2 * m * w_col + cell_span + 1
    big = 2 * (n * w_row + m * w_col) + cell_span + 1
    # A total's cents up to its floor are mandatory (a cost below any other choice); its one
    # optional cent is rewarded when largest remainder wants it and charged when not.
    mandatory: list[tuple[int, int]] = []
    for i in range(n):
        need = math.floor(row_sums[i]) - sum(floors[i])
        mandatory.append((flow.add(source, 1 + i, need, -big), need))
        _optional(flow, source, 1 + i, row_sums[i], want_rows[i], w_row)
    for j in range(m):
        need = math.floor(col_sums[j]) - sum(floors[i][j] for i in range(n))
        mandatory.append((flow.add(1 + n + j, sink, need, -big), need))
        _optional(flow, 1 + n + j, sink, col_sums[j], want_cols[j], w_col)
    cell_edges = {}
    for i, j in cells:
        up = table[i][j] - floors[i][j]  # in (0, 1): how far the exact figure is above the floor
        cost = int(((1 - 2 * up) * _CELL_SCALE).to_integral_value())
        cell_edges[(i, j)] = flow.add(1 + i, 1 + n + j, 1, cost)
    flow.send(source, sink, grand - sum(map(sum, floors)))
    if any(flow.sent(edge) != need for edge, need in mandatory):  # pragma: no cover - a bug
        raise AssertionError("controlled rounding missed a floor")
    out = [list(row) for row in floors]
    for (i, j), edge in cell_edges.items():
        out[i][j] += flow.sent(edge)
    return Footed(
        tuple(tuple(row) for row in out),
        tuple(sum(row) for row in out),
        tuple(sum(out[i][j] for i in range(n)) for j in range(m)),
        grand,
    )


def _optional(flow: _Flow, tail: int, head: int, exact: Decimal, wanted: int, weight: int) -> None:
    """The one cent a total may round up by: rewarded if largest remainder wants it, else not."""
    if exact != math.floor(exact):
        flow.add(tail, head, 1, -weight if wanted > math.floor(exact) else weight)


class _Flow:
    """Minimum-cost flow by successive shortest paths, for tables of a few hundred cells."""

    def __init__(self, nodes: int) -> None:
        self._adj: list[list[int]] = [[] for _ in range(nodes)]
        self._to: list[int] = []
        self._cap: list[int] = []
        self._cost: list[int] = []
        self._start: list[int] = []

    def add(self, tail: int, head: int, cap: int, cost: int) -> int:
        """Add an edge (and its residual twin); returns its id."""
        edge = len(self._to)
        for a, b, c, w in ((tail, head, cap, cost), (head, tail, 0, -cost)):
            self._adj[a].append(len(self._to))
            self._to.append(b)
            self._cap.append(c)
            self._cost.append(w)
            self._start.append(c)
        return edge

    def sent(self, edge: int) -> int:
        """Units of flow on an edge."""
        return self._start[edge] - self._cap[edge]

    def send(self, source: int, sink: int, units: int) -> None:
        """Send `units` from source to sink at minimum cost, one shortest path at a time."""
        while units > 0:
            via = self._shortest(source)
            if via[sink] < 0:
                raise ValueError("not enough capacity to round this table")
            push, v = units, sink
            while v != source:
                push = min(push, self._cap[via[v]])
                v = self._to[via[v] ^ 1]
            v = sink
            while v != source:
                self._cap[via[v]] -= push
                self._cap[via[v] ^ 1] += push
                v = self._to[via[v] ^ 1]
            units -= push

    def _shortest(self, source: int) -> list[int]:
        """The edge into each node on a cheapest path (-1: unreachable).

        Bellman-Ford with a queue: costs are negative, and successive shortest paths never
        leave a negative cycle in the residual graph, so it ends.
        """
        dist: list[int | None] = [None] * len(self._adj)
        via = [-1] * len(self._adj)
        dist[source] = 0
        queue, queued = deque([source]), {source}
        while queue:
            v = queue.popleft()
            queued.discard(v)
            d = dist[v]
            assert d is not None
            for e in self._adj[v]:
                w = self._to[e]
                old = dist[w]
                if self._cap[e] > 0 and (old is None or d + self._cost[e] < old):
                    dist[w], via[w] = d + self._cost[e], e
                    if w not in queued:
                        queue.append(w)
                        queued.add(w)
        return via

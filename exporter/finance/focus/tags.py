"""FOCUS `Tags` with every dimension: each team's cell split by its combinations, to the cent.

Each printed cell of the report (a team's component for the month) is split over the joint
combinations of dimension values its cost carries (`ledger.dimensions.joint`), in whole cents:

1. A combination worth less than a cent of the cell folds into the cell's largest one (its
   money and its quantity), so rows never multiply for dust.
2. Each combination takes its exact share rounded down or up, the shares adding up to the cell
   (largest remainder).
3. Then, component by component, a cent is moved within a cell from a combination rounded up to
   one rounded down whenever that brings every dimension's sums closer to `report --by NAME`'s
   printed cells, until no such move is left. Every share stays its exact share rounded down or
   up, every cell stays the report's cell: a dimension's sum matches `report --by` wherever a
   rounding of the teams' cells allows it.

The rows of a combination are then split over resources as the team's cell is, and over days
by the combination's own daily cost where the days have it (`rows`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from exporter.finance.focus.aim import Share, aim
from exporter.finance.report.figures import Report
from exporter.finance.report.footing import largest_remainder
from exporter.ledger.attribution import IDLE, UNALLOCATED
from exporter.ledger.dimensions.joint import Combination, JointSplit

__all__ = ["Share", "Tagging", "cell_cents", "combination_cents", "tagging"]

_Cell = tuple[str, str]  # (team, component)


@dataclass(frozen=True)
class Tagging:
    """What the export tags rows with: the dimensions' names, each cell's mix of combinations
    (teams folded as the report folds them), and each dimension's printed cells in cents."""

    names: tuple[str, ...] = ()
    mix: Mapping[_Cell, Mapping[Combination, float]] = field(default_factory=dict)
    targets: tuple[Mapping[tuple[str, str], int], ...] = ()  # per dimension: (value, comp) ->


def tagging(joint: JointSplit, by_dimension: Sequence[Report] = ()) -> Tagging:
    """The join's joint split (teams counted as the ledger counts them), and the dimension
    reports' printed cells as the sums to aim for."""
    mix = {cell: dict(sorted(combos.items())) for cell, combos in sorted(joint.by_team.items())}
    targets = tuple(
        {(row.team, c): cell_cents(row.costs[c]) for row in report.rows for c in report.components}
        for report in by_dimension
    )
    return Tagging(joint.names, mix, targets)


def cell_cents(amount: Decimal) -> int:
    """A printed amount in whole cents."""
    return int((amount * 100).to_integral_value())


def combination_cents(report: Report, by: Tagging) -> dict[_Cell, list[Share]]:
    """Every cell of the report split over its combinations (see the module's steps)."""
    cells: dict[_Cell, list[Share]] = {}
    exact: dict[_Cell, list[Decimal]] = {}
    for row in report.rows:
        for component in report.components:
            key = (row.team, component)
            cents = cell_cents(row.costs[component])
            weights = _folded(_weights(by, key), cents)
            combos = sorted(weights)
            shares = _exact(cents, [weights[c] for c in combos])
            rounded = largest_remainder(shares, cents)
            cells[key] = [Share(c, r, weights[c]) for c, r in zip(combos, rounded, strict=True)]
            exact[key] = shares
    for component in sorted(set(report.components)):
        aim(cells, exact, by.targets, component)
    return cells


def _weights(by: Tagging, key: _Cell) -> dict[Combination, float]:
    n = len(by.names)
    weights = {c: w for c, w in by.mix.get(key, {}).items() if w}
    if not weights:
        return {((IDLE if key[0] == IDLE else UNALLOCATED),) * n: 1.0}
    if any(w < 0 for w in weights.values()) and any(w > 0 for w in weights.values()):
        # Teams of opposite signs folded into one row (a serving team's credit in `__other__`):
        # shares by size, so every part has the row's sign.
        return {c: abs(w) for c, w in weights.items()}
    return weights


def _exact(cents: int, weights: Sequence[float]) -> list[Decimal]:
    as_decimal = [Decimal(repr(w)) for w in weights]
    total = sum(as_decimal, Decimal(0))
    shares = [Decimal(cents) * w / total for w in as_decimal]
    shares[-1] = Decimal(cents) - sum(shares[:-1], Decimal(0))  # the division's dust
    return shares


def _folded(weights: dict[Combination, float], cents: int) -> dict[Combination, float]:
    """Combinations under a cent of the cell folded into its largest (a cell of no cents keeps
    only its largest combination, which takes any quantity)."""
    total = sum(weights.values())
    largest = min(weights, key=lambda c: (-abs(weights[c]), c))
    out = {largest: 0.0}
    for combo, weight in sorted(weights.items()):
        small = abs(Decimal(cents) * Decimal(repr(weight)) / Decimal(repr(total))) < 1
        out[largest if small else combo] = out.get(largest if small else combo, 0.0) + weight
    return out

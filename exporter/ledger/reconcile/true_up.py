"""True-up: a closed month's difference between a bill and the records, spread onto the teams.

Each team takes the difference in proportion to its recorded share of the bill's scope (its
spend with that provider, or its share of the cluster's hardware cost), in whole cents that add
up exactly to the difference rounded once: largest remainder, as the report foots its rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from exporter.ledger.attribution import UNALLOCATED
from exporter.ledger.reconcile.figures import BillFigures

__all__ = ["TrueUp", "spread_cents", "true_up"]


@dataclass(frozen=True, kw_only=True)
class TrueUp:
    """One bill's true-up: the difference it closes, and each team's part of it."""

    source: str
    provider: str
    scope: str
    invoices: tuple[str, ...]
    amount: float  # billed minus recorded, to the cent
    teams: Mapping[str, float]  # each team's part, to the cent; the parts add up to `amount`


def true_up(figures: BillFigures, shares: Mapping[str, float]) -> TrueUp | None:
    """The true-up of a bill whose month is closed and billed whole, and configured to true up;
    None otherwise (the month to date never trues up: its bills are not all in)."""
    if not (figures.true_up and figures.month_closed):
        return None
    total = _cents(figures.difference)
    parts = spread_cents(total, shares)
    return TrueUp(
        source=figures.source,
        provider=figures.provider,
        scope=figures.scope,
        invoices=figures.invoices,
        amount=total / 100,
        teams={team: cents / 100 for team, cents in parts.items() if cents},
    )


def spread_cents(total: int, shares: Mapping[str, float]) -> dict[str, int]:
    """`total` cents over the teams by their (positive) shares, largest remainder first, ties
    to the earlier team by name; with no positive share, all of it is `__unallocated__`'s."""
    teams = sorted(t for t, w in shares.items() if w > 0 and math.isfinite(w))
    weights = [Decimal(repr(shares[t])) for t in teams]
    whole = sum(weights, Decimal(0))
    if not teams or whole <= 0:
        return {UNALLOCATED: total} if total else {}
    exact = [Decimal(total) * w / whole for w in weights]
    floors = [math.floor(v) for v in exact]
    extra = total - sum(floors)
    ranked = sorted(range(len(teams)), key=lambda i: (floors[i] - exact[i], i))
    for i in ranked[:extra]:
        floors[i] += 1
    return dict(zip(teams, floors, strict=True))


def _cents(amount: float) -> int:
    """An amount in whole cents, rounded once, halves away from zero."""
    return int((Decimal(repr(amount)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))

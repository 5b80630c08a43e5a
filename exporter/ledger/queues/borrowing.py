"""Next month's borrowing: the last 30 days of borrowed GPU-hours at today's price (pure).

A forecast, not a bill: if a team borrows next month as it did over the last 30 days, the
borrowed GPU-hours, scaled to next month's length, cost this much at the price applied today.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["WINDOW_DAYS", "BorrowingAhead", "borrowing_ahead"]

WINDOW_DAYS = 30


@dataclass(frozen=True)
class BorrowingAhead:
    """One team's borrowed GPU-hours of the last 30 days, and next month's cost at that pace."""

    team: str
    gpu_hours: float  # borrowed over the last WINDOW_DAYS days
    price: float  # today's applied GPU-hour price
    cost: float  # next month's borrowing at that pace and price


def borrowing_ahead(
    borrowed: Mapping[str, float], price: float, next_month_hours: float
) -> tuple[BorrowingAhead, ...]:
    """Per team, the 30 days' borrowed GPU-hours scaled to `next_month_hours`, at `price`."""
    scale = next_month_hours / (WINDOW_DAYS * 24.0)
    return tuple(
        BorrowingAhead(team, hours, price, hours * scale * price)
        for team, hours in sorted(borrowed.items())
    )

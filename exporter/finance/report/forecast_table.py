"""The report's forecast table as data: rows of low, middle and high in whole cents."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

__all__ = ["ForecastRow", "ForecastTable"]


@dataclass(frozen=True)
class ForecastRow:
    """One row's forecast of the month's end, in whole cents."""

    name: str
    low: Decimal
    mid: Decimal
    high: Decimal


@dataclass(frozen=True)
class ForecastTable:
    """The rows' forecasts, their total (the middles foot to it), and what they rest on."""

    rows: tuple[ForecastRow, ...]
    total: ForecastRow  # low and high: the cluster's own interval
    elapsed_days: float
    length_days: float
    whole_days: int
    prior: bool

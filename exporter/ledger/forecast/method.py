"""The month-end forecast of one cost: a blended daily run rate and a spread-based interval.

A finance reader can redo it by hand. With `S` spent so far over `e` elapsed days of a month of
`L` days (so `R = L - e` days remain):

- this month's run rate is `S / e`; last month's is its total over its days;
- while the month is young (`e` under YOUNG_DAYS) the two are blended, this month's weight
  `w = e / YOUNG_DAYS` growing by the day: `rate = w * S / e + (1 - w) * last`;
- the middle of the forecast is `S + R * rate`;
- the interval is `mid -/+ Z * s * sqrt(R + R^2 / n)`: `s` is the spread (sample standard
  deviation) of whole days' costs, `R` the days still to come, each as uncertain as a past day,
  and `R^2 / n` the doubt in the rate itself, measured on `n` days.

Every step is linear in the costs for the middle, so teams' middles add up to the cluster's
(money is conserved); bounds are each cost's own and do not add.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "MIN_ELAPSED",
    "MIN_SPREAD_DAYS",
    "YOUNG_DAYS",
    "Bounds",
    "Prior",
    "Span",
    "Z",
    "forecast",
    "rate",
    "spread",
]

# Last month counts for the first week only: a week holds every weekday once, so by then the
# month's own rate has seen the weekly cycle.
YOUNG_DAYS = 7.0
# Two-sided 90 % of a normal spread: finance asks "how far could it land", not a 1-in-1000 tail.
Z = 1.645
# Fewer whole days than this say little about the spread.
MIN_SPREAD_DAYS = 3
# The run rate is measured over an hour at least, as the join's hourly window is: over the
# month's first seconds it would be any number at all.
MIN_ELAPSED = 1.0 / 24.0


@dataclass(frozen=True)
class Span:
    """Where the month stands: days elapsed (a fraction of today included) of its length."""

    elapsed: float
    length: float

    @property
    def remaining(self) -> float:
        """Days still to come."""
        return max(self.length - self.elapsed, 0.0)

    @property
    def weight(self) -> float:
        """This month's weight against last month's rate (1 once the month is a week old)."""
        return min(1.0, max(self.elapsed, 0.0) / YOUNG_DAYS)


@dataclass(frozen=True)
class Prior:
    """The last closed month of the same cost: its total, its length, and its whole days."""

    total: float
    length: float
    days: tuple[float, ...] = ()

    @property
    def daily(self) -> float:
        """Last month's mean daily cost."""
        return self.total / self.length if self.length > 0 else 0.0


@dataclass(frozen=True)
class Bounds:
    """A forecast of the month's end: low, middle and high, in the cost's currency."""

    low: float
    mid: float
    high: float


def forecast(spent: float, days: Sequence[float], span: Span, prior: Prior | None = None) -> Bounds:
    """The month-end forecast of a cost that is `spent` so far, whose whole days so far
    (where known) were `days`."""
    remaining = span.remaining
    if remaining <= 0:
        return Bounds(spent, spent, spent)
    mid = spent + remaining * rate(spent, span, prior)
    half = (
        Z
        * spread(days, span, spent, prior)
        * math.sqrt(remaining + remaining**2 / _measured_days(span, prior))
    )
    return Bounds(mid - half, mid, mid + half)


def rate(spent: float, span: Span, prior: Prior | None) -> float:
    """The blended daily run rate."""
    own = spent / max(span.elapsed, MIN_ELAPSED)
    if prior is None:
        return own
    w = span.weight
    return w * own + (1.0 - w) * prior.daily


def spread(days: Sequence[float], span: Span, spent: float, prior: Prior | None) -> float:
    """The day-to-day spread: this month's whole days, else last month's, else the rate
    itself (a band as wide as a day's cost, for a cost nothing is known of day by day)."""
    for sample in (days, prior.days if prior is not None else ()):
        if len(sample) >= MIN_SPREAD_DAYS:
            return _sd(sample)
    return abs(rate(spent, span, prior))


def _measured_days(span: Span, prior: Prior | None) -> float:
    """How many days the rate rests on: this month's, plus last month's to its weight."""
    own = max(span.elapsed, 1.0)
    if prior is None:
        return own
    return own + (1.0 - span.weight) * prior.length


def _sd(sample: Sequence[float]) -> float:
    mean = math.fsum(sample) / len(sample)
    return math.sqrt(math.fsum((x - mean) ** 2 for x in sample) / (len(sample) - 1))

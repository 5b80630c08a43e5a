"""The forecast's back-test: closed months forecast as if at day 5, 10, ..., against their actual.

Each closed month's whole days are known, so the forecast a server would have made at the end
of day `d` is redone with the first `d` days (the month to date and its whole days) and last
month as the prior, and set against the month's actual total: the absolute percentage error of
the middle (APE) and whether the actual fell inside the interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from exporter.ledger.forecast.method import Prior, Span, forecast

__all__ = ["CUTS", "Trial", "backtest", "summary"]

CUTS: tuple[int, ...] = (5, 10, 15, 20, 25)


@dataclass(frozen=True)
class Trial:
    """One forecast of a closed month at the end of day `cut`, against the actual."""

    month: str
    key: str
    cut: int
    mid: float
    low: float
    high: float
    actual: float

    @property
    def ape(self) -> float | None:
        """The middle's absolute percentage error; None for an actual of 0."""
        return abs(self.mid - self.actual) / abs(self.actual) * 100 if self.actual else None

    @property
    def covered(self) -> bool:
        """Whether the actual fell inside the interval (to float rounding: a month of identical
        days has a zero-width interval that its actual meets only up to the last bit)."""
        slack = 1e-9 * max(1.0, abs(self.actual))
        return self.low - slack <= self.actual <= self.high + slack


def backtest(
    month: str,
    days: Mapping[str, Sequence[float]],
    prior: Mapping[str, Sequence[float]] | None = None,
    cuts: Sequence[int] = CUTS,
) -> list[Trial]:
    """Each key's closed month (its whole days, `days`) forecast at every cut, with last
    month's days (`prior`) when known."""
    out: list[Trial] = []
    for key, series in sorted(days.items()):
        length = float(len(series))
        before = (prior or {}).get(key)
        known = Prior(math.fsum(before), float(len(before)), tuple(before)) if before else None
        actual = math.fsum(series)
        for cut in cuts:
            seen = series[:cut]
            got = forecast(math.fsum(seen), seen, Span(float(cut), length), known)
            out.append(Trial(month, key, cut, got.mid, got.low, got.high, actual))
    return out


def summary(trials: Sequence[Trial]) -> dict[int, tuple[float, float, int]]:
    """By cut: MAPE (%), interval coverage (%), and how many forecasts they rest on."""
    out: dict[int, tuple[float, float, int]] = {}
    for cut in sorted({t.cut for t in trials}):
        at = [t for t in trials if t.cut == cut]
        apes = [a for t in at if (a := t.ape) is not None]
        mape = math.fsum(apes) / len(apes) if apes else math.nan
        out[cut] = (mape, 100.0 * sum(t.covered for t in at) / len(at), len(at))
    return out

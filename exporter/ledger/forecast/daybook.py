"""The month to date as last seen in each local day: whole days' costs without a by-day read.

The server joins the month to date every refresh. The last join of a local day is the month to
date at (nearly) that day's end, so the difference of two days' last figures is the later
day's cost: a book of those figures gives the whole days' costs for the forecast's spread, and,
once a month has been seen to its last day, last month's total for a young month. Nothing is
read for it; a process that starts mid-month knows the days it has seen (the forecast's middle
needs only the month to date, so it is the same either way; only the interval learns).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from exporter.calendar import Month
from exporter.ledger.forecast.method import Prior

__all__ = ["DayBook", "Key", "MonthDays"]

Key = tuple[str, ...]


@dataclass(frozen=True)
class MonthDays:
    """One month's figures: the month to date last seen in each local day, by day index."""

    month: Month
    seen: Mapping[int, Mapping[Key, float]] = field(default_factory=dict)

    def whole_days(self, key: Key, today: int) -> tuple[float, ...]:
        """The costs of the whole days before `today` whose own end and the day before's end
        were both seen (day 0 needs only its own)."""
        out: list[float] = []
        for day in range(today):
            if day not in self.seen or (day > 0 and day - 1 not in self.seen):
                continue
            before = self.seen[day - 1].get(key, 0.0) if day > 0 else 0.0
            out.append(self.seen[day].get(key, 0.0) - before)
        return tuple(out)

    def seen_to_end(self) -> bool:
        """Whether the month's last day was seen (its last figures are then its total)."""
        return len(self.month.days()) - 1 in self.seen

    def prior(self, key: Key) -> Prior:
        """This month, closed and seen to its end, as the prior of the next."""
        days = self.month.days()
        last = self.seen[len(days) - 1]
        return Prior(last.get(key, 0.0), float(len(days)), self.whole_days(key, len(days)))


@dataclass(frozen=True)
class DayBook:
    """This month's figures by day, and last month's when the book saw it to its end."""

    current: MonthDays | None = None
    last: MonthDays | None = None

    def noted(self, month: Month, day: int, figures: Mapping[Key, float]) -> DayBook:
        """The book with `figures` (the month to date now, in local day `day`) written in."""
        current = self.current
        if current is None or current.month != month:
            closed = current if current is not None and current.month.end == month.start else None
            kept = closed if closed is not None and closed.seen_to_end() else None
            current = MonthDays(month)
            book = DayBook(current, kept)
        else:
            book = self
        seen = dict(current.seen)
        seen[day] = dict(figures)
        return replace(book, current=MonthDays(month, seen))

    def prior(self, key: Key) -> Prior | None:
        """Last month's total and days of `key`, when the book saw last month whole."""
        return self.last.prior(key) if self.last is not None else None

    def whole_days(self, key: Key, today: int) -> tuple[float, ...]:
        """This month's whole days' costs of `key` that the book can tell."""
        return self.current.whole_days(key, today) if self.current is not None else ()

"""What a source's fetch is told to read: the open month, a closed month, or a month day by day.

The server reads the open month up to now on every refresh; the report reads a closed month at
its end; the FOCUS export reads a month (closed, or to date) once and asks the snapshots for
each local day's month to date (`DayByDay`). Every source takes the same `Reading`, so the
server and finance use one source table and one join.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol, Self, runtime_checkable
from zoneinfo import ZoneInfo

from exporter.calendar import Month, next_month_start

__all__ = ["DayByDay", "Reading", "as_of"]

_UTC = ZoneInfo("UTC")
_LAST = timedelta(microseconds=1)


@dataclass(frozen=True)
class Reading:
    """A month, read up to `until`; `at` is the instant sources without history answer for."""

    month: Month
    until: datetime  # windows end here: now in the open month, the month's end once closed
    at: datetime  # the instant of the read, inside the month
    closed: bool = False
    by_day: bool = False  # keep each local day apart, for `DayByDay.as_of`

    @classmethod
    def open(cls, now: datetime, zone: ZoneInfo) -> Reading:
        """The month to date, as a refresh at `now` reads it."""
        return cls(Month.of(now, zone), now, now)

    @classmethod
    def closed_month(cls, month: Month, *, by_day: bool = False) -> Reading:
        """A whole past month, read at the last microsecond that is in it both in its zone and
        in UTC (LiteLLM keys its rows by UTC date; no zone is a whole day away from UTC)."""
        utc_end = next_month_start(month.start.replace(tzinfo=_UTC), _UTC)
        at = min(month.end, utc_end) - _LAST
        return cls(month, month.end, at, closed=True, by_day=by_day)

    def days(self) -> list[tuple[datetime, datetime]]:
        """The local days read, as [start, end): the month's, the last one cut at `until` (in
        the open month, today so far)."""
        days = [(start, end) for start, end in self.month.days() if start < self.until]
        return [*days[:-1], (days[-1][0], min(days[-1][1], self.until))] if days else []

    def day_ends(self) -> list[Reading]:
        """The month to date at each local day's end; the last is the whole reading, as read."""
        days = self.days()
        out = [replace(self, until=end, at=end - _LAST, by_day=False) for _, end in days[:-1]]
        return [*out, replace(self, by_day=False)]


@runtime_checkable
class DayByDay(Protocol):
    """A snapshot read `by_day` that can say what an earlier reading of its month would give."""

    def as_of(self, reading: Reading) -> Self:
        """The snapshot as `reading` (one day's month to date) would have read it."""
        ...


def as_of(snapshot: object, reading: Reading) -> object:
    """A by-day snapshot as of `reading`; a snapshot of state now (quota, GPUs) as it is."""
    return snapshot.as_of(reading) if isinstance(snapshot, DayByDay) else snapshot


@runtime_checkable
class RunningDays(Protocol):
    """A by-day snapshot that gives the month to date at many day ends in one pass."""

    def as_of_each(self, readings: Sequence[Reading]) -> Iterator[Self]:
        """The snapshot as each of `readings` (in order) would have read it."""
        ...


def as_of_each(snapshot: object, readings: Sequence[Reading]) -> Iterator[object]:
    """A snapshot as of each reading in turn (readings in order, each a later day's end)."""
    if isinstance(snapshot, RunningDays):
        yield from snapshot.as_of_each(readings)
        return
    for reading in readings:
        yield as_of(snapshot, reading)

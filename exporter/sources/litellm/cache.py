"""The month's LiteLLM daily usage kept across refreshes: closed days cached, open days re-read.

LiteLLM keys its daily rows by the UTC date of each request, and writes them in batches every
~10-15 s, so a date's rows stop changing soon after that UTC date ends. The calendar month
follows the configured time zone, whose days are not UTC days: at each month edge up to the
zone's UTC offset in hours of usage sits in a UTC date of the neighbouring month. That is the
boundary error of day rows, whichever endpoint is read (the aggregated endpoint's `timezone`
moves no row across a date; it only lets a range that ends "today" reach the current UTC date).

So a refresh asks for the month's UTC dates from the zone's 1st to the later of today here and
today in UTC, re-reads only today's UTC date (and yesterday's, for SETTLE after it ended), and
keeps the rest. A full read every `reconcile_interval` compares every kept date with what the
proxy says now, replaces those that differ and counts them as repairs. A new process, or a new
month, starts with a full read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo

from exporter.sources.litellm.day_spend import DaySpend, DaySpendMemo
from exporter.sources.litellm.key_breakdown import DayUsage
from exporter.sources.litellm.packed import PackedDates, PackedDay, Uses

__all__ = ["DAY", "DailyCache", "MonthDates", "month_dates"]

DAY = timedelta(days=1)
# How long after a UTC date ends its rows may still be written: the proxy flushes spend to the
# daily tables every 10 s plus up to 5 s of jitter, so an hour is ample; a later write is found
# by the next full read and counted as a repair.
SETTLE = timedelta(hours=1)


@dataclass(frozen=True)
class MonthDates:
    """The UTC dates that make up this month in the configured zone, and what can change."""

    start: date  # the zone's 1st of the month
    end: date  # today in the zone, or today in UTC when UTC is a date ahead
    open_from: date  # dates from here on can still change
    # UTC minus local time in minutes, as LiteLLM's `timezone` parameter takes it (the sign of
    # JavaScript's Date.getTimezoneOffset: Los Angeles in winter is 480, Auckland in summer -780).
    offset_minutes: int
    edge_seconds: float  # the zone's offset from UTC at the start of the month, east positive


def month_dates(now: datetime, zone: tzinfo) -> MonthDates:
    """The month containing `now` in `zone`, as LiteLLM date keys."""
    local, utc = now.astimezone(zone), now.astimezone(UTC)
    start = local.date().replace(day=1)
    first = datetime(start.year, start.month, 1, tzinfo=zone)
    return MonthDates(
        start=start,
        end=max(local.date(), utc.date()),
        open_from=max(start, _open_from(utc)),
        offset_minutes=-round(_offset(local).total_seconds() / 60),
        edge_seconds=_offset(first).total_seconds(),
    )


def _open_from(utc: datetime) -> date:
    """The first UTC date that may still gain rows: yesterday's until SETTLE past its end."""
    today = utc.date()
    midnight = datetime(today.year, today.month, today.day, tzinfo=UTC)
    return today - DAY if utc - midnight < SETTLE else today


def _offset(moment: datetime) -> timedelta:
    offset = moment.utcoffset()
    return timedelta() if offset is None else offset


@dataclass
class DailyCache:
    """Closed dates of one month, per process (a restart reads the month again)."""

    month: date | None = None
    closed: dict[str, PackedDay] = field(default_factory=dict)
    closed_until: date | None = None  # every date before this one is in `closed` (or empty)
    aliases: dict[str, str] = field(default_factory=dict)
    last_full: datetime | None = None
    repairs: int = 0
    # The month's uses, and the closed dates' totals: summed again only when they change.
    _uses: Uses = field(default_factory=Uses)
    _spend: DaySpendMemo = field(default_factory=DaySpendMemo)

    def read_from(self, dates: MonthDates, now: datetime, every: timedelta) -> date:
        """The first date this refresh must read: the month's start when a full read is due."""
        if (
            self.month != dates.start
            or self.closed_until is None
            or self.last_full is None
            or now - self.last_full >= every
            or now < self.last_full  # the clock went back: trust nothing kept
        ):
            return dates.start
        return min(self.closed_until, dates.open_from)

    def update(
        self,
        dates: MonthDates,
        read_from: date,
        read: Mapping[str, DayUsage],
        aliases: Mapping[str, str],
        now: datetime,
    ) -> DayUsage:
        """Merge a read from `read_from` with the kept dates; returns the month's totals."""
        full = read_from == dates.start
        if self.month != dates.start:
            self.closed, self.aliases = {}, {}
            self._uses = read.table if isinstance(read, PackedDates) else Uses()
        until = dates.open_from if self.closed_until is None else self.closed_until
        # Date by date, not items(): a read's dates may be kept packed and unpacked on demand,
        # and the whole month unpacked at once is what packing them saved.
        packed: dict[str, PackedDay] = {}
        for d in sorted(read):
            if date.fromisoformat(d) < max(until, dates.open_from):
                day = self._packed(read, d)
                if day is not None:
                    packed[d] = day
        if full and self.month == dates.start:
            self.repairs += _differences(self.closed, packed, self.closed_until)
        kept = {d: u for d, u in self.closed.items() if date.fromisoformat(d) < read_from}
        closed = dict(sorted({**kept, **packed}.items()))
        closed = {d: u for d, u in closed.items() if date.fromisoformat(d) < dates.open_from}
        self.month, self.closed_until = dates.start, dates.open_from
        self._keep_closed(closed)
        self.aliases.update(aliases)
        if full:
            self.last_full = now
        totals = self._uses.totals()
        for d in sorted(read):
            if d not in closed:
                _add_day(totals, read[d])
        return totals

    def day_spend(self, read: Mapping[str, DayUsage]) -> DaySpend:
        """The month's spend per date and model: the kept dates' and those just read."""
        return self._spend.month(self.closed, self._uses.uses, read)

    def uses_for(self, dates: MonthDates) -> Uses:
        """The table a read of `dates`' month packs into: this cache's, or a new month's."""
        return self._uses if self.month == dates.start else Uses()

    def _packed(self, read: Mapping[str, DayUsage], day: str) -> PackedDay | None:
        """A read date packed over this cache's table; None when it had no use."""
        if isinstance(read, PackedDates) and read.table is self._uses:
            packed = read.packed(day)
            return packed if len(packed.index) else None
        usage = read[day]
        return self._uses.pack(usage) if usage else None

    def _keep_closed(self, closed: dict[str, PackedDay]) -> None:
        # Summing a month of a thousand teams x fifty models is a million additions: when the
        # kept dates are unchanged and later ones close, only those are added.
        before = self.closed
        new = sorted(closed.keys() - before.keys())
        kept = all(closed.get(d) is u for d, u in before.items())
        later = not before or not new or new[0] > max(before)  # date order keeps sums exact
        if kept and later and self._uses.seen:
            self._uses.add(closed[d] for d in new)
        else:
            self._uses.clear_totals()
            self._uses.add(closed[d] for d in sorted(closed))
        self.closed = closed


def _add_day(totals: DayUsage, usage: DayUsage) -> None:
    for use, metrics in usage.items():
        before = totals.get(use)
        totals[use] = metrics if before is None else before.plus(metrics)


def _differences(
    kept: Mapping[str, PackedDay], read: Mapping[str, PackedDay], until: date | None
) -> int:
    """Kept dates that a full read sees differently (a date kept empty counts when it is not)."""
    if until is None:
        return 0
    dates = {d for d in kept} | {d for d in read if date.fromisoformat(d) < until}
    return sum(1 for d in dates if not _same_day(kept.get(d), read.get(d)))


def _same_day(a: PackedDay | None, b: PackedDay | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.same_as(b)

"""Calendar months in the configured time zone: where a month starts, ends and how long it is."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

__all__ = ["Month", "month_start", "next_month_start"]

_LABEL = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")


def month_start(now: datetime, zone: ZoneInfo) -> datetime:
    """Midnight of the 1st of `now`'s month, in `zone` (an aware datetime)."""
    local = now.astimezone(zone)
    return local.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month_start(now: datetime, zone: ZoneInfo) -> datetime:
    """Midnight of the 1st of the following month, in `zone`."""
    start = month_start(now, zone)
    # Day 28 + 4 days always lands in the next month; DST shifts are absorbed by replace().
    return (start.replace(day=28) + timedelta(days=4)).replace(day=1)


@dataclass(frozen=True)
class Month:
    """One calendar month of a time zone, [start, end): worked out once and handed down."""

    start: datetime  # midnight of the 1st, aware, in the zone
    end: datetime  # midnight of the next month's 1st

    @classmethod
    def of(cls, instant: datetime, zone: ZoneInfo) -> Month:
        """The month that holds `instant` in `zone`."""
        return cls(month_start(instant, zone), next_month_start(instant, zone))

    @classmethod
    def parse(cls, text: str, zone: ZoneInfo) -> Month:
        """`YYYY-MM` as a month of `zone`; ValueError when the text is not a month."""
        match = _LABEL.fullmatch(text)
        if match is None:
            raise ValueError(f"{text!r} is not a month: give YYYY-MM")
        return cls.of(datetime(int(match[1]), int(match[2]), 1, tzinfo=zone), zone)

    @property
    def zone(self) -> ZoneInfo:
        """The time zone the month's days are counted in."""
        zone = self.start.tzinfo
        assert isinstance(zone, ZoneInfo)
        return zone

    @property
    def label(self) -> str:
        """`YYYY-MM`, as finance names the month."""
        return self.start.strftime("%Y-%m")

    @property
    def hours(self) -> float:
        """Real elapsed hours (743 or 745 across a DST change)."""
        # Timestamps: two datetimes of one zone subtract as wall time, blind to DST.
        return (self.end.timestamp() - self.start.timestamp()) / 3600.0

    @property
    def utc_offset_seconds(self) -> float:
        """The zone's offset from UTC at the month's start, east positive."""
        offset = self.start.utcoffset()
        return 0.0 if offset is None else offset.total_seconds()

    def days(self) -> list[tuple[datetime, datetime]]:
        """Every local day as [start, end), aware, 23 or 25 hours long across a DST change."""
        zone, out, day = self.zone, [], self.start
        while day < self.end:
            # Local midnight of the next date: adding a day to a wall time absorbs DST shifts.
            following = (day.replace(tzinfo=None) + timedelta(days=1)).replace(tzinfo=zone)
            out.append((day, following))
            day = following
        return out

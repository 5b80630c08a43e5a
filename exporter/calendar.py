"""Calendar months in the configured time zone: where the month starts and how long it is."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

__all__ = ["hours_in_month", "month_start", "next_month_start"]


def month_start(now: datetime, zone: ZoneInfo) -> datetime:
    """Midnight of the 1st of `now`'s month, in `zone` (an aware datetime)."""
    local = now.astimezone(zone)
    return local.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month_start(now: datetime, zone: ZoneInfo) -> datetime:
    """Midnight of the 1st of the following month, in `zone`."""
    start = month_start(now, zone)
    # Day 28 + 4 days always lands in the next month; DST shifts are absorbed by replace().
    return (start.replace(day=28) + timedelta(days=4)).replace(day=1)


def hours_in_month(now: datetime, zone: ZoneInfo) -> float:
    """Real elapsed hours of `now`'s calendar month (743 or 745 across a DST change)."""
    start, end = month_start(now, zone), next_month_start(now, zone)
    return (end.timestamp() - start.timestamp()) / 3600.0

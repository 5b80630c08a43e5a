"""FOCUS days: a closed month's local calendar days, stamped in UTC."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from exporter.finance.closed_month import ClosedMonth
from exporter.finance.focus.days import day_bounds
from exporter.finance.focus.rows import utc_stamp


def test_days_are_local_calendar_days_in_utc_stamps() -> None:
    zone = ZoneInfo("America/New_York")
    start, end = datetime(2026, 11, 1, tzinfo=zone), datetime(2026, 12, 1, tzinfo=zone)
    days = day_bounds(ClosedMonth(start, end, end))
    assert len(days) == 30
    assert utc_stamp(days[0][0]) == "2026-11-01T04:00:00Z"
    assert utc_stamp(days[0][1]) == "2026-11-02T05:00:00Z"  # the 25-hour day DST ends on
    assert days[-1][1] == end

"""Calendar months: parsed and found once, their real hours, and their local days."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from exporter.calendar import Month
from exporter.finance.focus.rows import utc_stamp

MADRID = ZoneInfo("Europe/Madrid")


def test_days_are_local_calendar_days_in_utc_stamps() -> None:
    zone = ZoneInfo("America/New_York")
    month = Month.parse("2026-11", zone)
    days = month.days()
    assert len(days) == 30
    assert utc_stamp(days[0][0]) == "2026-11-01T04:00:00Z"
    assert utc_stamp(days[0][1]) == "2026-11-02T05:00:00Z"  # the 25-hour day DST ends on
    assert days[-1][1] == month.end == datetime(2026, 12, 1, tzinfo=zone)


def test_a_month_has_its_real_hours_and_its_zone_offset() -> None:
    october = Month.of(datetime(2026, 10, 31, 23, 30, tzinfo=UTC), MADRID)  # Nov 1st in Madrid
    assert october.label == "2026-11"
    assert Month.parse("2026-10", MADRID).hours == 745.0  # summer time ends on the 25th
    assert Month.parse("2026-03", MADRID).hours == 743.0
    assert Month.parse("2026-11", ZoneInfo("UTC")).hours == 720.0
    assert Month.parse("2026-10", MADRID).utc_offset_seconds == 7200.0
    assert Month.parse("2026-12", ZoneInfo("America/Los_Angeles")).utc_offset_seconds == -28800.0


@pytest.mark.parametrize("text", ["2026-13", "2026-1", "October", ""])
def test_a_label_that_is_not_a_month_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a month"):
        Month.parse(text, MADRID)

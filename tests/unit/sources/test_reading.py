"""What a fetch is told to read: the open month, a closed month, and a closed month's days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from exporter.calendar import Month
from exporter.sources.reading import Reading, as_of

MADRID = ZoneInfo("Europe/Madrid")
LOS_ANGELES = ZoneInfo("America/Los_Angeles")


def test_the_open_month_is_read_up_to_now() -> None:
    now = datetime(2026, 11, 15, 12, 30, tzinfo=UTC)
    reading = Reading.open(now, MADRID)
    assert (reading.until, reading.at, reading.closed, reading.by_day) == (now, now, False, False)
    assert reading.month == Month.parse("2026-11", MADRID)


def test_a_closed_month_is_read_on_its_last_day_locally_and_in_utc() -> None:
    for zone in (MADRID, LOS_ANGELES, ZoneInfo("Pacific/Auckland")):
        reading = Reading.closed_month(Month.parse("2026-10", zone))
        assert reading.closed and reading.until == reading.month.end
        for where in (zone, ZoneInfo("UTC")):
            local = reading.at.astimezone(where)
            assert (local.month, local.day) == (10, 31), (zone, where)


def test_day_ends_give_each_days_month_to_date_and_the_month_last() -> None:
    reading = Reading.closed_month(Month.parse("2026-10", MADRID), by_day=True)
    days = reading.day_ends()
    assert len(days) == 31 and not any(d.by_day for d in days)
    assert days[0].until == datetime(2026, 10, 2, tzinfo=MADRID)
    assert days[0].at == days[0].until - timedelta(microseconds=1)
    assert (days[-1].until, days[-1].at) == (reading.until, reading.at)


def test_a_snapshot_of_state_now_is_the_same_for_every_day() -> None:
    reading = Reading.closed_month(Month.parse("2026-10", MADRID), by_day=True)
    state = object()
    assert as_of(state, reading.day_ends()[3]) is state


def test_the_open_months_days_end_now() -> None:
    zone = ZoneInfo("Europe/Madrid")
    now = datetime(2026, 11, 3, 9, 30, tzinfo=UTC)
    reading = Reading.open(now, zone)
    days = reading.days()
    assert [d.date().isoformat() for d, _ in days] == ["2026-11-01", "2026-11-02", "2026-11-03"]
    assert days[-1][1] == now  # today so far
    ends = reading.day_ends()
    assert [r.until for r in ends] == [end for _, end in days]
    assert Reading.open(reading.month.start, zone).days() == []

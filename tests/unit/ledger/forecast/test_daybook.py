"""The day book: whole days' costs from the last figures of each day, last month once seen whole."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from exporter.calendar import Month
from exporter.ledger.forecast.daybook import DayBook
from exporter.ledger.forecast.method import Prior

ZONE = ZoneInfo("Europe/Madrid")
OCT, NOV, DEC = (Month.of(datetime(2026, m, 2, tzinfo=ZONE), ZONE) for m in (10, 11, 12))
T = ("team", "a")


def test_whole_days_are_the_differences_of_each_days_last_figures() -> None:
    book = DayBook()
    for day, spent in ((0, 4.0), (0, 10.0), (1, 25.0), (2, 31.0), (3, 33.0)):
        book = book.noted(NOV, day, {T: spent})
    assert book.whole_days(T, 3) == (10.0, 15.0, 6.0)
    assert book.whole_days(("team", "unknown"), 3) == (0.0, 0.0, 0.0)


def test_a_day_not_seen_leaves_it_and_the_next_out() -> None:
    book = DayBook()
    for day, spent in ((4, 50.0), (5, 60.0), (7, 90.0), (8, 95.0), (9, 96.0)):
        book = book.noted(NOV, day, {T: spent})
    assert book.whole_days(T, 9) == (10.0, 5.0)  # day 5 and day 8


def test_last_month_is_a_prior_only_when_seen_to_its_end() -> None:
    book = DayBook()
    for day in range(31):
        book = book.noted(OCT, day, {T: 10.0 * (day + 1)})
    book = book.noted(NOV, 0, {T: 3.0})
    assert book.prior(T) == Prior(310.0, 31.0, (10.0,) * 31)
    assert book.prior(("team", "b")) == Prior(0.0, 31.0, (0.0,) * 31)
    # November was seen from its 2nd day only, and not to its end: December has no prior.
    assert book.noted(DEC, 0, {T: 1.0}).prior(T) is None


def test_a_month_skipped_is_no_prior() -> None:
    book = DayBook()
    for day in range(31):
        book = book.noted(OCT, day, {T: 1.0})
    assert book.noted(DEC, 0, {T: 1.0}).prior(T) is None

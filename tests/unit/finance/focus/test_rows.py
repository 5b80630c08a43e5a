"""FOCUS rows: a month's cell apportioned over its days foots to the cent."""

from __future__ import annotations

from decimal import Decimal

from exporter.finance.focus.rows import apportion


def test_apportion_foots_and_falls_back_to_hours() -> None:
    hours = [Decimal(24), Decimal(25), Decimal(23)]
    even = apportion(100, [Decimal(1), Decimal(1), Decimal(1)], hours)
    assert sum(even) == 100 and set(even) == {33, 34}
    assert apportion(100, [Decimal(3), Decimal(1), Decimal(0)], hours) == [75, 25, 0]
    # Days that disagree in sign with the month are spread by hours instead.
    shares = apportion(100, [Decimal(5), Decimal(-4), Decimal(0)], hours)
    assert sum(shares) == 100 and all(s > 0 for s in shares)
    assert sum(apportion(-7, [Decimal("-0.1"), Decimal("-0.2"), Decimal(0)], hours)) == -7
    assert apportion(0, [Decimal(0)] * 3, hours) == [0, 0, 0]

"""Next month's borrowing: the last 30 days at today's price, scaled to next month."""

from __future__ import annotations

import pytest

from exporter.ledger.queues.borrowing import borrowing_ahead


def test_thirty_days_of_borrowing_scaled_to_a_31_day_month() -> None:
    (a, b) = borrowing_ahead({"b": 0.0, "a": 720.0}, 2.0, 744.0)
    assert (a.team, a.gpu_hours) == ("a", 720.0)
    assert a.cost == pytest.approx(1488.0)
    assert (b.team, b.cost) == ("b", 0.0)

"""The back-test: forecasts of closed months at day 5..25 against their actual."""

from __future__ import annotations

import pytest

from exporter.ledger.forecast.backtest import backtest, summary


def test_a_flat_month_is_forecast_exactly_and_covered() -> None:
    trials = backtest("2026-10", {"a": [10.0] * 31})
    assert [t.cut for t in trials] == [5, 10, 15, 20, 25]
    assert all(t.mid == pytest.approx(310.0) and t.covered for t in trials)
    assert summary(trials)[5] == pytest.approx((0.0, 100.0, 1))


def test_a_ramp_is_under_forecast_and_the_error_shrinks_with_the_days() -> None:
    days = [float(d) for d in range(1, 31)]  # 465 in all
    got = summary(backtest("2026-11", {"a": days}))
    # Day 5: 15 + 25 x 3 = 90 against 465, 80.6 % off.
    assert got[5][0] == pytest.approx(abs(90 - 465) / 465 * 100)
    assert got[25][0] < got[15][0] < got[5][0]


def test_a_young_month_leans_on_last_months_days() -> None:
    # Day 5 of 30: 50 spent (10 a day); last month 20 a day: w = 5/7.
    trial = backtest("2026-11", {"a": [10.0] * 30}, {"a": [20.0] * 31}, cuts=(5,))[0]
    rate = 5 / 7 * 10.0 + 2 / 7 * 20.0
    assert trial.mid == pytest.approx(50.0 + 25 * rate)
    assert trial.actual == 300.0


def test_a_zero_actual_has_no_percentage_error() -> None:
    assert backtest("2026-11", {"a": [0.0] * 30}, cuts=(5,))[0].ape is None

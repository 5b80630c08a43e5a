"""The forecast method on hand-worked months: flat, a ramp, a young month leaning on the last."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.ledger.forecast.method import YOUNG_DAYS, Bounds, Prior, Span, Z, forecast, rate


def test_a_flat_month_lands_on_its_run_rate_with_no_spread() -> None:
    # 10 a day for 12 whole days and half of the 13th: 125 spent, 17.5 days left.
    got = forecast(125.0, [10.0] * 12, Span(12.5, 30.0))
    assert got == Bounds(300.0, 300.0, 300.0)


def test_a_ramp_is_forecast_at_its_mean_rate_and_its_spread_widens_the_band() -> None:
    # Days cost 1, 2, ..., 10: 55 spent in 10 whole days of a 30-day month.
    days = [float(d) for d in range(1, 11)]
    got = forecast(55.0, days, Span(10.0, 30.0))
    assert got.mid == pytest.approx(55.0 + 20.0 * 5.5)  # 165: the mean rate, not the last day's
    sd = math.sqrt(sum((d - 5.5) ** 2 for d in days) / 9)  # 3.0277
    half = Z * sd * math.sqrt(20.0 + 20.0**2 / 10.0)  # 1.645 x 3.0277 x sqrt(60) = 38.579
    assert (got.low, got.high) == pytest.approx((165.0 - half, 165.0 + half))
    assert half == pytest.approx(38.579, abs=1e-3)


def test_a_young_month_leans_on_last_month() -> None:
    # Day 2 of 31 (1.75 days elapsed), 35 spent (20 a day); last month 300 over 30 days (10 a day).
    prior = Prior(300.0, 30.0, (10.0,) * 30)
    span = Span(1.75, 31.0)
    w = 1.75 / YOUNG_DAYS  # 0.25
    assert rate(35.0, span, prior) == pytest.approx(0.25 * 20.0 + 0.75 * 10.0)  # 12.5
    got = forecast(35.0, [20.0], span, prior)
    assert got.mid == pytest.approx(35.0 + 29.25 * 12.5)
    # Last month's days were all alike: the spread of too few days of this month is theirs.
    assert (got.low, got.high) == (got.mid, got.mid)
    assert w == 0.25


def test_a_week_old_month_forgets_last_month() -> None:
    prior = Prior(3_000.0, 30.0)
    assert rate(70.0, Span(YOUNG_DAYS, 30.0), prior) == pytest.approx(10.0)


def test_a_month_with_nothing_known_day_by_day_gets_a_band_a_day_wide() -> None:
    got = forecast(100.0, [], Span(10.0, 30.0))
    half = Z * 10.0 * math.sqrt(20.0 + 20.0**2 / 10.0)
    assert (got.low, got.mid, got.high) == pytest.approx((300.0 - half, 300.0, 300.0 + half))


def test_the_first_instant_of_a_month_without_a_prior_forecasts_nothing() -> None:
    assert forecast(0.0, [], Span(0.0, 30.0)) == Bounds(0.0, 0.0, 0.0)


_money = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)


@given(
    spent=_money,
    days=st.lists(_money, max_size=31),
    elapsed=st.floats(min_value=0.0, max_value=31.0),
    prior=st.none() | st.builds(Prior, _money, st.sampled_from([28.0, 30.0, 31.0])),
)
def test_the_interval_holds_the_middle(
    spent: float, days: list[float], elapsed: float, prior: Prior | None
) -> None:
    got = forecast(spent, days, Span(elapsed, 31.0), prior)
    assert got.low <= got.mid <= got.high


@given(spent=_money, days=st.lists(_money, max_size=31), length=st.sampled_from([28.0, 31.0]))
def test_a_finished_month_forecasts_its_actual(
    spent: float, days: list[float], length: float
) -> None:
    assert forecast(spent, days, Span(length, length), Prior(5.0, 30.0)) == Bounds(
        spent, spent, spent
    )

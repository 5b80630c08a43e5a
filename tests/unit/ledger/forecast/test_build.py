"""The forecast of a joined month: every figure's, and money conserved across teams and values."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.calendar import Month
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.dimensions.beyond_team import DimensionSplit
from exporter.ledger.dimensions.split import DimensionCosts
from exporter.ledger.forecast.build import figures_of, noted, span_of, with_forecast
from exporter.ledger.forecast.daybook import DayBook
from exporter.ledger.forecast.method import Bounds, Prior
from exporter.ledger.result import Chargeback
from exporter.ledger.units.economics import UnitEconomics
from exporter.sources.reading import Reading

ZONE = ZoneInfo("Europe/Madrid")
NOW = datetime(2026, 11, 3, 12, 0, tzinfo=ZONE)  # 2.5 days into a 30-day November
NOVEMBER = Month.of(NOW, ZONE)
OCTOBER = Month.of(datetime(2026, 10, 2, tzinfo=ZONE), ZONE)


def _chargeback(
    costs: dict[tuple[str, str], float],
    values: dict[tuple[str, str], str] | None = None,
    reading: Reading | None = None,
) -> Chargeback:
    split = DimensionCosts("product")
    for (team, component), amount in costs.items():
        key = ((values or {}).get((team, component), "p"), component)
        split.costs[key] = split.costs.get(key, 0.0) + amount
    return Chargeback(
        reading=reading or Reading.open(NOW, ZONE),
        budgets={},
        units=UnitEconomics(),
        month=Ledger(dict(costs)),
        dimensions=(DimensionSplit("product", DimensionCosts("product"), split),),
    )


def test_a_month_without_opencost_has_no_forecast() -> None:
    bare = Chargeback(reading=Reading.open(NOW, ZONE), budgets={}, units=UnitEconomics())
    assert with_forecast(bare).forecast is None


def test_the_span_counts_local_days_across_a_dst_change() -> None:
    # 2026-10-25 is 25 hours long in Madrid (02:00-03:00 twice): noon is 13 real hours in.
    span = span_of(OCTOBER, datetime(2026, 10, 25, 12, 0, tzinfo=ZONE))
    assert span.length == 31.0
    assert span.elapsed == pytest.approx(24 + 13 / 25)
    assert span_of(OCTOBER, OCTOBER.end).elapsed == 31.0


def test_budget_kinds_split_the_external_llm_bill_from_the_rest() -> None:
    got = figures_of(_chargeback({("a", "gpu"): 30.0, ("a", "llm_external"): 5.0}))
    assert got[("kind", "a", "gpu")] == 30.0 and got[("kind", "a", "llm")] == 5.0
    assert got[("team", "a")] == got[("cluster",)] == 35.0


def test_a_flat_month_seen_by_day_forecasts_its_run_rate() -> None:
    book = DayBook()
    for day, spent in ((0, 10.0), (1, 20.0)):
        book = book.noted(NOVEMBER, day, {("team", "a"): spent, ("cluster",): spent})
    chargeback = _chargeback({("a", "gpu"): 25.0})
    book = book.noted(NOVEMBER, 2, figures_of(chargeback))
    got = with_forecast(chargeback, book).forecast
    assert got is not None
    assert got.teams["a"].mid == pytest.approx(300.0)
    assert got.whole_days == 2 and not got.prior


def test_a_book_of_another_month_is_not_read() -> None:
    book = DayBook().noted(OCTOBER, 0, {("team", "a"): 1e6})
    got = with_forecast(_chargeback({("a", "gpu"): 25.0}), book).forecast
    assert got is not None and got.teams["a"].mid == pytest.approx(300.0)


def test_a_closed_month_forecasts_its_actual() -> None:
    closed = _chargeback({("a", "gpu"): 70.0}, reading=Reading.closed_month(OCTOBER))
    got = with_forecast(closed).forecast
    assert got is not None and got.teams["a"] == got.cluster == Bounds(70.0, 70.0, 70.0)


_teams = st.sampled_from(["a", "b", "c", "__idle__", "__unallocated__"])
_components = st.sampled_from(["gpu", "cpu", "idle_share", "llm_external", "lent"])
_costs = st.dictionaries(
    st.tuples(_teams, _components),
    st.floats(min_value=-1e4, max_value=1e6, allow_nan=False),
    min_size=1,
)


@given(
    last=_costs,
    now=_costs,
    values=st.dictionaries(st.tuples(_teams, _components), st.sampled_from(["p", "q", "r"])),
    hours=st.integers(min_value=0, max_value=30 * 24 - 1),
)
def test_forecasts_conserve_money_across_teams_kinds_and_values(
    last: dict[tuple[str, str], float],
    now: dict[tuple[str, str], float],
    values: dict[tuple[str, str], str],
    hours: int,
) -> None:
    book = DayBook()
    previous = figures_of(_chargeback(last, values))
    for day in range(31):
        book = book.noted(OCTOBER, day, previous)
    at = NOVEMBER.start + timedelta(hours=hours)
    chargeback = _chargeback(now, values, Reading.open(at, ZONE))
    book = book.noted(NOVEMBER, (at - NOVEMBER.start).days, figures_of(chargeback))
    got = with_forecast(chargeback, book).forecast
    assert got is not None
    total = got.cluster.mid
    scale = max(1.0, sum(abs(v) for v in (*last.values(), *now.values())) * 31)
    for parts in (got.teams, got.kinds, got.dimensions):
        assert sum(b.mid for b in parts.values()) == pytest.approx(total, abs=1e-9 * scale)
    for bounds in (*got.teams.values(), *got.kinds.values(), *got.dimensions.values()):
        assert bounds.low <= bounds.mid <= bounds.high


def test_the_chargeback_keeps_everything_else() -> None:
    chargeback = _chargeback({("a", "gpu"): 25.0})
    assert replace(with_forecast(chargeback), forecast=None) == chargeback


def _at(when: datetime, spent: float) -> Chargeback:
    return _chargeback({("a", "gpu"): spent}, reading=Reading.open(when, ZONE))


def test_a_server_learns_whole_days_and_last_month_refresh_by_refresh() -> None:
    book = DayBook()
    # October, 10 a day, refreshed at 23:00 each local day: the book sees it to its end.
    for day in range(31):
        book, _ = noted(book, _at(OCTOBER.start + timedelta(days=day, hours=23), 10.0 * (day + 1)))
    assert book.prior(("team", "a")) is None  # October is still this month
    # November 1st at noon, 4 spent: half a day in, last month's 10 a day weighs 1 - 0.5/7.
    book, first = noted(book, _at(NOVEMBER.start + timedelta(hours=12), 4.0))
    assert book.prior(("team", "a")) == Prior(310.0, 31.0, (10.0,) * 31)
    assert first.forecast is not None and first.forecast.prior
    rate = (0.5 / 7) * 8.0 + (1 - 0.5 / 7) * 10.0
    assert first.forecast.teams["a"].mid == pytest.approx(4.0 + 29.5 * rate)
    # Three whole days later the spread is this month's own: 8, 12, 10 a day.
    for day, spent in ((0, 8.0), (1, 20.0), (2, 30.0)):
        book, _ = noted(book, _at(NOVEMBER.start + timedelta(days=day, hours=23), spent))
    book, got = noted(book, _at(NOVEMBER.start + timedelta(days=3, hours=12), 35.0))
    assert got.forecast is not None and got.forecast.whole_days == 3
    assert got.forecast.teams["a"].high - got.forecast.teams["a"].mid == pytest.approx(
        1.645 * 2.0 * (26.5 + 26.5**2 / (3.5 + (1 - 3.5 / 7) * 31)) ** 0.5
    )

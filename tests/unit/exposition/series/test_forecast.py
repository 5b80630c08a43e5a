"""Forecast series: three bounds per figure, and none without a forecast."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from exporter.exposition.series.forecast import series
from exporter.ledger.forecast import Bounds, MonthForecast
from exporter.ledger.result import Chargeback
from exporter.ledger.units.economics import UnitEconomics
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW

READING = Reading.open(FIXED_NOW, ZoneInfo("UTC"))


def test_each_figure_has_a_low_mid_and_high() -> None:
    found = MonthForecast(
        elapsed_days=10.0,
        length_days=30.0,
        whole_days=10,
        prior=False,
        cluster=Bounds(90.0, 100.0, 110.0),
        teams={"a": Bounds(1.0, 2.0, 3.0)},
        kinds={("a", "gpu"): Bounds(1.0, 2.0, 3.0)},
        dimensions={("product", "web"): Bounds(4.0, 5.0, 6.0)},
    )
    chargeback = Chargeback(reading=READING, budgets={}, units=UnitEconomics(), forecast=found)
    got = {(s.family.exposed_name, s.labels): s.value for s in series(chargeback)}
    assert got[("chargeback_cluster_cost_forecast_month_end", (("bound", "high"),))] == 110.0
    assert got[("chargeback_team_cost_forecast_month_end", (("team", "a"), ("bound", "mid")))] == 2
    kind = (("team", "a"), ("kind", "gpu"), ("bound", "low"))
    assert got[("chargeback_team_kind_cost_forecast_month_end", kind)] == 1.0
    value = (("dimension", "product"), ("value", "web"), ("bound", "mid"))
    assert got[("chargeback_dimension_cost_forecast_month_end", value)] == 5.0
    assert len(got) == 12


def test_no_forecast_no_series() -> None:
    assert series(Chargeback(reading=READING, budgets={}, units=UnitEconomics())) == []

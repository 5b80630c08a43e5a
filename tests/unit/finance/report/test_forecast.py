"""The report's forecast table: rows that foot, the month to date only, every format."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from decimal import Decimal
from zoneinfo import ZoneInfo

from exporter.finance.report.figures import Report, TeamRow
from exporter.finance.report.forecast import with_forecast_table
from exporter.finance.report.formats import format_report
from exporter.ledger.forecast import Bounds, MonthForecast
from exporter.ledger.result import Chargeback
from exporter.ledger.units.economics import UnitEconomics
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW

_D = Decimal


def _report(names: tuple[str, ...], by: str = "team", closed: bool = False) -> Report:
    rows = tuple(TeamRow(n, {"gpu": _D(1)}, _D(1)) for n in names)
    return Report(
        currency="EUR",
        month="2026-11",
        components=("gpu",),
        rows=rows,
        columns={"gpu": _D(len(names))},
        total=_D(len(names)),
        idle=_D(0),
        idle_shared=_D(0),
        closed=closed,
        by=by,
    )


FOUND = MonthForecast(
    elapsed_days=14.5625,
    length_days=30.0,
    whole_days=3,
    prior=False,
    cluster=Bounds(5.0, 6.015, 7.0),
    # Three half cents: rounded alone they print 1.01 + 2.01 + 3.01 = 6.03, not the 6.02 the
    # exact middles add up to.
    teams={"a": Bounds(0.5, 1.005, 1.5), "b": Bounds(1.5, 2.005, 2.5), "c": Bounds(2, 3.005, 4)},
    dimensions={("product", "web"): Bounds(1.0, 2.0, 3.0)},
)
CHARGEBACK = Chargeback(
    reading=Reading.open(FIXED_NOW, ZoneInfo("UTC")),
    budgets={},
    units=UnitEconomics(),
    forecast=FOUND,
)


def test_the_middles_foot_to_the_printed_total() -> None:
    table = with_forecast_table(_report(("a", "b", "c")), CHARGEBACK).forecast
    assert table is not None
    assert sum(r.mid for r in table.rows) == table.total.mid == _D("6.02")
    assert [r.low for r in table.rows] == [_D("0.50"), _D("1.50"), _D("2.00")]
    assert (table.total.low, table.total.high) == (_D("5.00"), _D("7.00"))


def test_a_closed_month_or_a_join_without_a_forecast_has_no_table() -> None:
    assert with_forecast_table(_report(("a",), closed=True), CHARGEBACK).forecast is None
    bare = replace(CHARGEBACK, forecast=None)
    assert with_forecast_table(_report(("a",)), bare).forecast is None


def test_a_dimensions_rows_are_its_values() -> None:
    table = with_forecast_table(_report(("web", "api"), by="product"), CHARGEBACK).forecast
    assert table is not None
    assert [(r.name, r.mid) for r in table.rows] == [("web", _D("2.00")), ("api", _D("0.00"))]


def test_json_csv_and_text_carry_it() -> None:
    report = with_forecast_table(_report(("a", "b", "c")), CHARGEBACK)
    data = json.loads(format_report(report, "json"))["forecast"]
    assert data["total"] == {"low": 5.0, "mid": 6.02, "high": 7.0}
    assert data["rows"][0] == {"team": "a", "low": 0.5, "mid": 1.01, "high": 1.5}
    rows = list(csv.DictReader(io.StringIO(format_report(report, "csv", "forecast"))))
    assert [r["team"] for r in rows] == ["a", "b", "c", "total"]
    assert rows[-1]["forecast_mid"] == "6.02" and rows[-1]["currency"] == "EUR"
    assert "Forecast of the month's end (14.6 of 30 days elapsed, 3 whole days" in format_report(
        report, "table"
    )


def test_a_closed_months_csv_table_is_its_header() -> None:
    got = format_report(_report(("a",), closed=True), "csv", "forecast")
    assert got.splitlines() == ["team,forecast_low,forecast_mid,forecast_high,currency"]


def test_one_teams_total_is_its_own_interval_not_the_clusters() -> None:
    table = with_forecast_table(replace(_report(("b",)), team="b"), CHARGEBACK).forecast
    assert table is not None
    assert (table.total.low, table.total.mid, table.total.high) == (
        _D("1.50"),
        _D("2.01"),
        _D("2.50"),
    )

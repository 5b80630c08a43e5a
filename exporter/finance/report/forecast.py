"""The month-end forecast in the report: low, middle and high per row, month to date only.

A closed month has its actual, so it has no forecast. The rows are the report's (teams, or a
dimension's values with `--by`); the middles are rounded to cents so that they foot to the
printed total, as every other table of the report does (docs/forecast.md says how they are made).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from decimal import Decimal
from typing import Any

from exporter.finance.report.figures import Report
from exporter.finance.report.footing import cents, largest_remainder, round_cents
from exporter.finance.report.forecast_table import ForecastRow, ForecastTable
from exporter.finance.report.writing import CSV, Cells
from exporter.ledger.forecast import Bounds
from exporter.ledger.result import Chargeback

__all__ = [
    "FORECAST_COLUMNS",
    "forecast_json",
    "forecast_lines",
    "forecast_text",
    "with_forecast_table",
]

FORECAST_COLUMNS = ("forecast_low", "forecast_mid", "forecast_high")
_CENT = Decimal("0.01")


def with_forecast_table(report: Report, chargeback: Chargeback) -> Report:
    """The report with its rows' forecast; unchanged for a closed month or without one."""
    found = chargeback.forecast
    if report.closed or found is None:
        return report
    names = [row.team for row in report.rows]
    if report.by == "team":
        bounds: Mapping[str, Bounds] = found.teams
    else:
        bounds = {v: b for (d, v), b in found.dimensions.items() if d == report.by}
    zero = Bounds(0.0, 0.0, 0.0)
    exact = [bounds.get(name, zero) for name in names]
    mids = [cents(b.mid) for b in exact]
    footed = largest_remainder(mids, round_cents(sum(mids, Decimal(0))))
    rows = tuple(
        ForecastRow(name, _money(b.low), Decimal(m) * _CENT, _money(b.high))
        for name, b, m in zip(names, exact, footed, strict=True)
    )
    cluster = found.cluster
    low, high = _money(cluster.low), _money(cluster.high)
    if report.team is not None:
        # One team's report: its total is its own row, not the cluster's interval.
        low, high = sum((r.low for r in rows), Decimal(0)), sum((r.high for r in rows), Decimal(0))
    total = ForecastRow("total", low, Decimal(sum(footed)) * _CENT, high)
    table = ForecastTable(
        rows, total, found.elapsed_days, found.length_days, found.whole_days, found.prior
    )
    return replace(report, forecast=table)


def _money(value: float) -> Decimal:
    return Decimal(round_cents(cents(value))) * _CENT


def forecast_lines(report: Report, cells: Cells = CSV) -> list[list[str]]:
    """Header, a row per team (or value), and the total; empty without a forecast."""
    table = report.forecast
    if table is None:
        return []
    lines = [[cells.head(c) for c in (report.by, *FORECAST_COLUMNS)]]
    for row in table.rows:
        money = (cells.money(row.low), cells.money(row.mid), cells.money(row.high))
        lines.append([cells.name(report.by, row.name), *money])
    total = table.total
    lines.append([cells.total, *(cells.money(v) for v in (total.low, total.mid, total.high))])
    return lines


def forecast_text(
    report: Report, cells: Cells, days: Callable[[float], str] = "{:.1f}".format
) -> tuple[str, list[list[str]]]:
    """The text table's forecast: the line that says what it rests on (days elapsed written
    by `days`, in the locale), and its cells."""
    table = report.forecast
    if table is None:
        return "", []
    prior = "; last month's rate blended in" if table.prior else ""
    total = "" if report.team is not None else "; the total's is the cluster's own"
    words = (
        f"Forecast of the month's end ({days(table.elapsed_days)} of {table.length_days:.0f} "
        f"days elapsed, {table.whole_days} whole days measured{prior}; low and high: 90 % "
        f"interval{total})"
    )
    return words, forecast_lines(report, cells)


def forecast_json(report: Report) -> dict[str, Any] | None:
    """The JSON report's forecast; None for a closed month or without one."""
    table = report.forecast
    if table is None:
        return None
    key = "team" if report.by == "team" else "value"
    return {
        "elapsed_days": round(table.elapsed_days, 4),
        "length_days": table.length_days,
        "whole_days": table.whole_days,
        "prior": table.prior,
        "rows": [
            {key: r.name, "low": float(r.low), "mid": float(r.mid), "high": float(r.high)}
            for r in table.rows
        ],
        "total": {
            "low": float(table.total.low),
            "mid": float(table.total.mid),
            "high": float(table.total.high),
        },
    }

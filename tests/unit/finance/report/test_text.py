"""The text report people read: labels rather than identifiers, the configured locale, counts
grouped alike, every printed column footing; and every table in CSV as well as JSON."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

from babel import Locale

from exporter.finance.report.figures import TABLES, Report, build_report, model_rows
from exporter.finance.report.formats import UNIT_TABLES, format_report, json_table
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.teams import TeamUsage
from exporter.ledger.attribution import IDLE, UNALLOCATED
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.llm import TeamModelUsage
from exporter.ledger.units.tokens import TeamTokenCost
from tests.unit.finance.report.test_units import UNITS
from tests.unit.finance.report.test_weights import report as weighted_report

SPANISH = Numbers(Locale("es", "ES"), "EUR")
IDENTIFIERS = ("__idle__", "__unallocated__", "idle_share", "llm_serving", "budget_gpu")


def _report() -> Report:
    ledger = Ledger()
    for team, component, amount in (
        ("research", "gpu", 1234.5),
        ("research", "idle_share", 10.0),
        ("search", "llm_serving", -5.0),
        ("research", "llm_serving", 5.0),
        (UNALLOCATED, "cpu", 2.25),
        (IDLE, "gpu", 1.0),
    ):
        ledger.add(team, component, amount)
    usage = {("research", "m"): TeamModelUsage(1.0, 1_234_567, 7_654_321, 12_345)}
    report = build_report(
        ledger,
        "EUR",
        "2026-11",
        {("research", "gpu"): 2000.0},
        model_rows(usage, (), {"m": "self_hosted"}),
        units=UNITS,
    )
    hours = {"research": TeamUsage(gpu_hours=100.005, guaranteed_gpus=1.0, hours=96.0)}
    hours["search"] = TeamUsage(gpu_hours=100.005)
    hours[UNALLOCATED] = TeamUsage(gpu_hours=65.515)
    return replace(report, usage=hours)


def test_the_text_table_speaks_labels_in_the_locale() -> None:
    text = format_report(_report(), "table", numbers=SPANISH)
    for hidden in IDENTIFIERS:
        assert hidden not in text, hidden
    for shown in (
        "Idle capacity",
        "Unallocated",
        "Share of idle",
        "Self-hosted LLMs",
        "GPU budget",
    ):
        assert shown in text, shown
    assert "1.234,50" in text and "2.000,00" in text  # es-ES: a dot groups, a comma decimals
    # Occupancy is explained where it is printed.
    assert "Occupancy: the GPU-hours a team used" in text


def test_counts_are_grouped_in_every_table() -> None:
    text = format_report(_report(), "table", numbers=SPANISH)
    assert "1.234.567" in text and "7.654.321" in text and "12.345" in text
    assert "1234567" not in text


def test_every_printed_column_foots_quantities_too() -> None:
    csv_text = format_report(_report(), "csv")
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    hours = [r["gpu_hours"] for r in rows if r["team"] != "total" and r["gpu_hours"]]
    (total,) = [r["gpu_hours"] for r in rows if r["team"] == "total"]
    # 100.005 + 100.005 + 65.515 = 265.525, printed 265.53; the rows add to it.
    assert total == "265.53"
    assert sum(round(float(h) * 100) for h in hours) == 26553
    text = format_report(_report(), "table", numbers=SPANISH)
    assert "265,53" in text


def test_csv_keeps_identifiers() -> None:
    rows = list(csv.reader(io.StringIO(format_report(_report(), "csv"))))
    assert rows[0][:3] == ["team", "gpu", "cpu"] and "budget_gpu" in rows[0]
    assert {r[0] for r in rows[1:]} >= {IDLE, UNALLOCATED, "total"}


def test_every_unit_table_is_in_csv_as_in_json() -> None:
    assert set(UNIT_TABLES) <= set(TABLES)
    report = replace(_report(), weights=weighted_report().weights)
    data = json.loads(format_report(report, "json"))
    for table, head in UNIT_TABLES.items():
        rows = list(csv.reader(io.StringIO(format_report(report, "csv", table))))
        assert rows[0] == [*head, "currency"], table
        expected = json_table(report, table)
        assert len(rows) == 1 + len(expected), table
        for row, record in zip(rows[1:], expected, strict=True):
            # The JSON's keys are the CSV's columns, its figures the cells.
            assert list(record) == list(head), table
            for cell, key in zip(row, head, strict=False):
                value = record[key]
                assert cell == ("" if value is None else str(value)), (table, key)
    assert data["unit_economics"]["llm_teams"] == json_table(report, "llm_teams")


def test_a_unit_tables_names_cannot_become_formulas() -> None:
    evil = TeamTokenCost("=HYPERLINK(1)", "m", "external", 10, 5, 1, 1.0)
    units = replace(UNITS, teams=(evil,))
    report = replace(_report(), units=units)
    rows = list(csv.reader(io.StringIO(format_report(report, "csv", "llm_teams"))))
    assert rows[1][0] == "'=HYPERLINK(1)"


def test_an_empty_unit_table_still_names_its_columns() -> None:
    report = replace(_report(), units=None)
    assert format_report(report, "csv", "gpu_prices").splitlines() == [
        "kind,name,price_per_gpu_hour,source,opencost_price_per_gpu_hour,currency"
    ]

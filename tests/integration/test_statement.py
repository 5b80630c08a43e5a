"""The demo's HTML statement shows the figures its report prints."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
from babel import Locale
from babel.numbers import format_decimal

from chargeback_demo.exporter import main as demo_main
from exporter.finance.report.numbers import Numbers
from exporter.finance.statement.charts import CHARTS, SPENT
from tests.conftest import CLOCK
from tests.support.statement_dom import assert_statement_matches, read_page

# The demo is in EUR, in Europe/Madrid: its statement speaks es-ES numbers.
DEMO_NUMBERS = Numbers(Locale("es", "ES"), "EUR")


def _demo(fmt: str, *extra: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert demo_main(["report", "--format", fmt, *extra], CLOCK) == 0
    return capsys.readouterr().out


def test_demo_statement_shows_the_reports_figures(capsys: pytest.CaptureFixture[str]) -> None:
    page = _demo("html", capsys=capsys)
    report = json.loads(_demo("json", capsys=capsys))
    teams = _demo("csv", capsys=capsys)
    models = _demo("csv", "--table", "models", capsys=capsys)
    figures = read_page(page)
    assert set(figures["charts"]) == set(CHARTS)
    assert_statement_matches(figures, report, teams, models, DEMO_NUMBERS)
    # The headline: the month's total and unallocated share, in the demo's locale (es-ES).
    assert DEMO_NUMBERS.money(report["total"]) in page
    assert DEMO_NUMBERS.percent(report["unallocated_share_percent"]) in page
    # Occupancy and weighted-token prices are explained where they are printed.
    assert "Occupancy: the GPU-hours a team used" in page
    assert "per weighted token" in page and "per million weighted tokens" in page
    # October closed: the ledger's 7,657.53 trued up by 166.28 to the OpenAI and cloud invoices
    # (the demo's own entry point trues up; chargeback_demo.stack).
    closed = _demo("html", "--month", "2026-10", capsys=capsys)
    assert "7.823,81\u00a0€" in closed and "166,28" in closed


def test_a_closed_month_reads_as_one(capsys: pytest.CaptureFixture[str]) -> None:
    page = _demo("html", "--month", "2026-10", capsys=capsys)
    budgets = read_page(page)["charts"]["budgets"]
    assert set(budgets) == {"Budget", SPENT}  # no forecast: it spent what it spent
    assert "Closed month" in page and "UTC" not in page
    # No identifier and no scientific notation reaches a reader.
    for hidden in ("__idle__", "__unallocated__", "idle_share", "llm_serving", "budget_gpu"):
        assert hidden not in page, hidden
    assert not re.search(r"\d[.,]?\d*e-\d", page)


def test_one_teams_statement(capsys: pytest.CaptureFixture[str]) -> None:
    page = _demo("html", "--team", "search", capsys=capsys)
    figures = read_page(page)
    team_table, *units = figures["tables"]
    assert [row[0] for row in team_table[1:]] == ["search"]
    # Its unit-economics rows are its own: what it paid per million tokens, as the JSON says.
    report = json.loads(_demo("json", capsys=capsys))["unit_economics"]
    (mine,) = [t for t in report["llm_teams"] if t["team"] == "search"]
    paid = next(
        table for table in units if table[0][:2] == ["Team", "Model"] and len(table[0]) == 8
    )
    assert paid[1:] == [
        [
            "search",
            mine["model"],
            "Self-hosted",
            DEMO_NUMBERS.count(mine["tokens"]),
            DEMO_NUMBERS.count(mine["requests"]),
            DEMO_NUMBERS.amount(round(mine["cost"], 2)),
            DEMO_NUMBERS.amount(round(mine["per_million_tokens"], 2)),
            format_decimal(Decimal(str(mine["per_request"])), "#,##0.0000", locale="es_ES"),
        ]
    ]
    assert all(row[0] == "search" for table in units for row in table[1:] if table[0][0] == "Team")
    # Search's Llama serving cost moved onto the senders by the measured weight, 50.
    assert figures["charts"]["teams"]["Credits"] == {"search": "-701,68"}
    # The completion weights are the cluster's, as its GPU prices: a team's page shows them.
    (weights,) = [t for t in units if t[0][:2] == ["Model", "Basis"]]
    assert weights[1][:5] == ["llama-3-70b", "Measured", "50,00", "3,00", "50,00"]
    assert demo_main(["report", "--format", "html", "--team", "nobody"], CLOCK) == 2
    assert "the teams are research, search, vision" in capsys.readouterr().err

"""The demo's HTML statement shows the figures its report prints."""

from __future__ import annotations

import json

import pytest

from chargeback_demo.exporter import main as demo_main
from exporter.finance.statement.html import CHARTS
from tests.conftest import CLOCK
from tests.support.statement_dom import assert_statement_matches, read_page


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
    assert_statement_matches(figures, report, teams, models)
    # The headline: the month's total and unallocated share, as the text report prints them.
    assert f"{report['total']:,.2f} EUR" in page
    assert f"{report['unallocated_share_percent']:.1f} %" in page

"""FOCUS export: demo rows follow FOCUS 1.2 and foot to the report; closed months stay closed."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from chargeback_demo.exporter import main as demo_main
from exporter.clock import fixed_clock
from exporter.finance.focus.columns import COLUMNS
from tests.conftest import CLOCK
from tests.support.focus_spec import violations

# Two instants after October 2026 has closed in Madrid, at different hours of the day (the
# fakes' Kueue usage, DCGM and team budgets differ between them).
LATER = fixed_clock(datetime(2026, 11, 2, 3, 10, tzinfo=UTC))


def _run(args: list[str], clock: object, capsys: pytest.CaptureFixture[str]) -> str:
    assert demo_main([*args], clock) == 0  # type: ignore[arg-type]
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def october() -> str:
    """The demo's October FOCUS export, read once at the tests' frozen time."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert demo_main(["report", "--format", "focus", "--month", "2026-10"], CLOCK) == 0
    return out.getvalue()


def _rows(text: str) -> tuple[list[str], list[dict[str, str | None]]]:
    reader = csv.DictReader(io.StringIO(text))
    rows = [{k: (v if v != "" else None) for k, v in row.items()} for row in reader]
    return list(reader.fieldnames or []), rows


def test_every_row_of_the_demo_month_follows_focus_1_2(october: str) -> None:
    header, rows = _rows(october)
    assert header == list(COLUMNS)
    assert len(rows) > 31
    problems = {p for row in rows for p in violations(header, row)}
    assert problems == set()
    assert {r["ChargePeriodStart"] for r in rows} >= {"2026-09-30T22:00:00Z"}
    # The day summer time ends is 25 hours long, and its rows say so.
    assert {
        (r["ChargePeriodStart"], r["ChargePeriodEnd"])
        for r in rows
        if r["x_ChargePeriodLocalDate"] == "2026-10-25"
    } == {("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")}
    assert {r["ChargeCategory"] for r in rows} == {"Usage", "Adjustment"}


def test_the_validator_catches_what_the_spec_forbids(october: str) -> None:
    header, rows = _rows(october)
    good = next(r for r in rows if r["ChargeCategory"] == "Usage")
    assert violations(header, good) == []
    broken = [
        {**good, "ChargeCategory": "Fee"},
        {**good, "BilledCost": "+1.00"},
        {**good, "ChargePeriodStart": "2026-10-01 00:00:00"},
        {**good, "ConsumedQuantity": None},
        {**good, "ServiceSubcategory": "Generative AI"},
        {**good, "ListCost": "0.01"},
        {**good, "Tags": '{"team": ["a"]}'},
    ]
    for row in broken:
        assert violations(header, row), row
    assert violations([c for c in header if c != "ProviderName"], good)


def test_the_rows_foot_to_the_report_total_to_the_cent(
    october: str, capsys: pytest.CaptureFixture[str]
) -> None:
    report = json.loads(_run(["report", "--format", "json", "--month", "2026-10"], CLOCK, capsys))
    _, rows = _rows(october)
    total = sum((Decimal(r["BilledCost"] or "0") for r in rows), Decimal(0))
    assert total == Decimal(str(report["total"])).quantize(Decimal("0.01"))
    for team in report["teams"]:
        for component, amount in team["components"].items():
            days = [
                Decimal(r["BilledCost"] or "0")
                for r in rows
                if r["SubAccountId"] == team["team"] and r["x_Component"] == component
            ]
            assert sum(days, Decimal(0)) == Decimal(str(amount)).quantize(Decimal("0.01"))


def test_a_closed_month_prints_the_same_bytes_whenever_it_runs(
    october: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for fmt in ("table", "csv", "json"):
        args = ["report", "--format", fmt, "--month", "2026-10"]
        assert _run(args, CLOCK, capsys) == _run(args, LATER, capsys)
    later = _run(["report", "--format", "focus", "--month", "2026-10"], LATER, capsys)
    assert later == october
    table = _run(["report", "--month", "2026-10"], CLOCK, capsys)
    assert "as they are when the report runs" in table
    assert "2026-11" not in table  # no instant of the run is printed


def test_focus_needs_a_closed_month(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo_main(["report", "--format", "focus"], CLOCK) == 2
    assert "--month" in capsys.readouterr().err

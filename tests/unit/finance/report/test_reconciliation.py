"""The report's reconciliation in every format: bills, largest unmatched lines, days, true-ups."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import date
from zoneinfo import ZoneInfo

from exporter.calendar import Month
from exporter.finance.report.figures import Report, build_report
from exporter.finance.report.formats import format_report
from exporter.finance.report.reconciliation import reconciliation_table
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.reconcile import BillFigures, DayFigures, Reconciliation, TrueUp, Unmatched
from exporter.ledger.result import Chargeback
from exporter.ledger.units.economics import UnitEconomics
from exporter.sources.bills.lines import BillKind
from exporter.sources.reading import Reading

D1, D2 = date(2026, 2, 1), date(2026, 2, 2)
READING = Reading.closed_month(Month.parse("2026-02", ZoneInfo("UTC")))
BILL = BillFigures(
    source="anthropic",
    provider="anthropic",
    scope="wrkspc_1",
    kind=BillKind.LLM,
    currency="USD",
    rate=0.8,
    billed=28.4,
    recorded=18.4,
    days=(DayFigures(D1, 18.4, 18.4), DayFigures(D2, 10.0, 0.0)),
    unmatched=(Unmatched("claude-sonnet-4", D2, 10.0, 0.0),),
    invoices=("INV-2026-02",),
    true_up=True,
    month_closed=True,
    days_billed=(D1, D2),
)
UP = TrueUp(
    source="anthropic",
    provider="anthropic",
    scope="wrkspc_1",
    invoices=("INV-2026-02",),
    amount=10.0,
    teams={"vision": 10.0},
)


def _chargeback() -> Chargeback:
    return Chargeback(
        reading=READING,
        budgets={},
        units=UnitEconomics(),
        reconciliation=Reconciliation(currency="EUR", bills=(BILL,), unknown_provider=1.25),
        true_ups=(UP,),
    )


def report_with_bills() -> Report:
    ledger = Ledger()
    ledger.add("vision", Component.LLM_EXTERNAL, 18.4)
    ledger.add("vision", Component.TRUE_UP, 10.0)
    report = build_report(ledger, "EUR", "2026-02", {}, (), closed=True)
    return replace(report, reconciliation=reconciliation_table(_chargeback()))


def test_json_carries_the_bill_the_unmatched_lines_the_days_and_the_true_up() -> None:
    payload = json.loads(format_report(report_with_bills(), "json"))
    (bill,) = payload["reconciliation"]["bills"]
    assert (bill["billed"], bill["recorded"], bill["difference"], bill["true_up"]) == (
        28.4,
        18.4,
        10.0,
        10.0,
    )
    assert bill["days_billed"] == ["2026-02-01", "2026-02-02"] and bill["rate"] == 0.8
    assert payload["reconciliation"]["unmatched"] == [
        {
            "source": "anthropic",
            "line": "claude-sonnet-4",
            "day": "2026-02-02",
            "billed": 10.0,
            "recorded": 0.0,
            "amount": 10.0,
        }
    ]
    assert payload["reconciliation"]["true_ups"][0]["teams"] == {"vision": 10.0}
    assert payload["components"]["true_up"] == 10.0
    assert payload["reconciliation"]["gateway_spend_without_provider"] == 1.25


def test_csv_is_one_row_per_bill_and_the_text_names_every_figure() -> None:
    text = format_report(report_with_bills(), "csv", "reconciliation")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["source"], r["billed"], r["difference"], r["true_up"]) for r in rows] == [
        ("anthropic", "28.40", "10.00", "10.00")
    ]
    assert (rows[0]["days_billed"], rows[0]["last_day_billed"]) == ("2", "2026-02-02")
    table = format_report(report_with_bills(), "table")
    assert "Reconciliation with the bills" in table
    assert "claude-sonnet-4" in table and "INV-2026-02" in table


def test_without_bills_the_report_has_no_reconciliation() -> None:
    plain = replace(_chargeback(), reconciliation=None, true_ups=())
    assert reconciliation_table(plain) is None

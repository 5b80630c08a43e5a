"""A closed month's true-up in FOCUS: Adjustment rows, no quantity, naming the invoices."""

from __future__ import annotations

from datetime import UTC, datetime

from exporter.finance.focus.days import DayLedger
from exporter.finance.focus.rows import FocusContext, focus_rows
from exporter.finance.report.figures import build_report
from exporter.ledger.costs.components import Component
from exporter.ledger.costs.ledger import Ledger

START, END = datetime(2026, 2, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)
LAST = datetime(2026, 2, 28, tzinfo=UTC)


def test_true_up_rows_are_adjustments_naming_the_provider_invoices() -> None:
    ledger = Ledger()
    ledger.add("vision", Component.TRUE_UP, 10.0)
    report = build_report(ledger, "EUR", "2026-02", {}, (), closed=True)
    day = DayLedger(LAST, END, {("vision", Component.TRUE_UP): 10.0})
    ctx = FocusContext(
        currency="EUR",
        month_start=START,
        month_end=END,
        cluster="prod",
        provider="Platform",
        invoice_issuer="Platform",
        invoice_id="prod-2026-02",
        true_up_invoices=("INV-7",),
    )
    (row,) = focus_rows(report, [day], ctx)
    assert (row.ChargeCategory, row.ConsumedQuantity, row.BilledCost) == (
        "Adjustment",
        None,
        "10.00",
    )
    assert (row.ServiceName, row.x_Component, row.InvoiceId) == (
        "Invoice True-up",
        "true_up",
        "prod-2026-02",
    )
    assert "INV-7" in row.ChargeDescription

"""The statement's reconciliation: each bill against the records, and the largest unmatched
lines, in the statement's locale (the same figures as the report's table)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from exporter.finance.report import labels
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.reconciliation import reconciliation_lines
from exporter.finance.report.writing import people
from exporter.finance.statement.figures import Statement
from exporter.finance.statement.page import note
from exporter.finance.statement.units import table_html

__all__ = ["reconciliation_html"]

_UNMATCHED_HEAD = ("bill", "line", "day", "billed", "recorded", "billed - recorded")


def reconciliation_html(statement: Statement, numbers: Numbers) -> list[str]:
    """The reconciliation tables (nothing without bills)."""
    table = statement.report.reconciliation
    if table is None:
        return []
    cells = people(numbers)
    head, *rows = reconciliation_lines(table, cells)
    caption = "Reconciliation with the bills (converted at the stated rate)"
    out = [table_html(head, rows, 5, caption)]
    if table.unmatched:
        lines = [
            [u.source, u.line, u.day, *(cells.money(v) for v in (u.billed, u.recorded, u.amount))]
            for u in table.unmatched
        ]
        out.append(table_html(_UNMATCHED_HEAD, lines, 3, "Largest unmatched lines"))
    for up in table.true_ups:
        parts = ", ".join(
            f"{labels.team(team)} {cells.money(_cents(v))}" for team, v in sorted(up.teams.items())
        )
        invoices = f" (invoice {', '.join(up.invoices)})" if up.invoices else ""
        out.append(note(f"Trued up to the {up.source} bill{invoices}: {parts}."))
    return out


def _cents(value: float) -> Decimal:
    return Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)

"""The report's reconciliation: each bill against the records, the largest unmatched lines,
the days billed so far and, for a closed month, what trued up onto the teams."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from exporter.finance.report import labels
from exporter.finance.report.writing import CSV, Cells
from exporter.ledger.reconcile import BillFigures, Reconciliation, TrueUp
from exporter.ledger.result import Chargeback

__all__ = [
    "RECONCILIATION_COLUMNS",
    "BillRow",
    "ReconciliationTable",
    "reconciliation_json",
    "reconciliation_lines",
    "reconciliation_table",
    "reconciliation_text",
]

RECONCILIATION_COLUMNS = (
    *("source", "provider", "scope", "kind", "currency", "rate", "billed", "recorded"),
    *("difference", "ratio", "true_up", "days_billed", "last_day_billed", "invoices"),
)
_CENT = Decimal("0.01")
_MONTH = "month"  # the unmatched line of a cluster compared as a whole month


def _money(value: float) -> Decimal:
    return Decimal(repr(value)).quantize(_CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class UnmatchedRow:
    """One of a bill's largest differences: a model (or the cluster) on a day."""

    source: str
    line: str
    day: str  # ISO date, or `month`
    billed: Decimal
    recorded: Decimal
    amount: Decimal


@dataclass(frozen=True)
class BillRow:
    """One bill source's provider and scope over the month's billed days, in cents."""

    figures: BillFigures
    billed: Decimal
    recorded: Decimal
    difference: Decimal
    true_up: Decimal | None  # None: this bill did not true up the month

    @property
    def last_day(self) -> date | None:
        """The last day of the month the bill holds whole."""
        return self.figures.days_billed[-1] if self.figures.days_billed else None


@dataclass(frozen=True)
class ReconciliationTable:
    """The reconciliation as the report prints it."""

    rows: tuple[BillRow, ...]
    unmatched: tuple[UnmatchedRow, ...]
    true_ups: tuple[TrueUp, ...]
    unknown_provider: Decimal
    unconverted: int


def reconciliation_table(chargeback: Chargeback) -> ReconciliationTable | None:
    """The join's reconciliation, printed; None without bills."""
    found: Reconciliation | None = chargeback.reconciliation
    if found is None:
        return None
    trued = {(u.source, u.provider, u.scope): u for u in chargeback.true_ups}
    rows = []
    unmatched = []
    for b in found.bills:
        up = trued.get((b.source, b.provider, b.scope))
        billed, recorded = _money(b.billed), _money(b.recorded)
        true_up = _money(up.amount) if up is not None else None
        rows.append(BillRow(b, billed, recorded, billed - recorded, true_up))
        for u in b.unmatched:
            day = u.day.isoformat() if u.day is not None else _MONTH
            money = (_money(u.billed), _money(u.recorded))
            unmatched.append(UnmatchedRow(b.source, u.line, day, *money, money[0] - money[1]))
    unmatched.sort(key=lambda u: (-abs(u.amount), u.source, u.day, u.line))
    return ReconciliationTable(
        tuple(rows),
        tuple(unmatched),
        chargeback.true_ups,
        _money(found.unknown_provider),
        found.unconverted,
    )


def _ratio(row: BillRow) -> str:
    ratio = row.figures.ratio
    return "" if ratio is None else f"{ratio:.4f}"


def reconciliation_lines(table: ReconciliationTable, cells: Cells = CSV) -> list[list[str]]:
    """Header, then one row per bill source, provider and scope."""
    lines = [[cells.head(c) for c in RECONCILIATION_COLUMNS]]
    for r in table.rows:
        b = r.figures
        lines.append(
            [
                *(b.source, b.provider, b.scope, b.kind.value, b.currency, f"{b.rate:g}"),
                *(cells.money(v) for v in (r.billed, r.recorded, r.difference)),
                _ratio(r),
                "" if r.true_up is None else cells.money(r.true_up),
                cells.count(len(b.days_billed)),
                r.last_day.isoformat() if r.last_day is not None else "",
                " ".join(b.invoices),
            ]
        )
    return lines


def reconciliation_text(table: ReconciliationTable, cells: Cells = CSV) -> list[str]:
    """The text report's section: the bills, the largest unmatched lines, the true-ups."""
    lines = ["Reconciliation with the bills (amounts converted at the stated rate)", ""]
    lines += ["  ".join(row) for row in reconciliation_lines(table, cells)]
    if table.unmatched:
        lines += ["", "Largest unmatched lines (billed - recorded)"]
        for u in table.unmatched:
            money = (cells.money(v) for v in (u.billed, u.recorded, u.amount))
            lines.append("  ".join((u.source, u.line, u.day, *money)))
    for up in table.true_ups:
        parts = ", ".join(
            f"{labels.team(t)} {cells.money(_money(v))}" for t, v in sorted(up.teams.items())
        )
        invoices = f" (invoice {' '.join(up.invoices)})" if up.invoices else ""
        lines.append(f"True-up {up.source}{invoices}: {parts}")
    if table.unknown_provider:
        lines.append(f"Gateway spend no bill can claim: {cells.money(table.unknown_provider)}")
    return lines


def reconciliation_json(table: ReconciliationTable) -> dict[str, Any]:
    """The JSON report's `reconciliation`."""
    return {
        "bills": [
            {
                "source": r.figures.source,
                "provider": r.figures.provider,
                "scope": r.figures.scope,
                "kind": r.figures.kind.value,
                "currency": r.figures.currency,
                "rate": r.figures.rate,
                "billed": float(r.billed),
                "recorded": float(r.recorded),
                "difference": float(r.difference),
                "ratio": r.figures.ratio,
                "true_up": None if r.true_up is None else float(r.true_up),
                "days_billed": [d.isoformat() for d in r.figures.days_billed],
                "month_billed_whole": r.figures.month_closed,
                "invoices": list(r.figures.invoices),
            }
            for r in table.rows
        ],
        "unmatched": [
            {
                "source": u.source,
                "line": u.line,
                "day": u.day,
                "billed": float(u.billed),
                "recorded": float(u.recorded),
                "amount": float(u.amount),
            }
            for u in table.unmatched
        ],
        "true_ups": [
            {
                "source": up.source,
                "provider": up.provider,
                "scope": up.scope,
                "invoices": list(up.invoices),
                "amount": up.amount,
                "teams": dict(sorted(up.teams.items())),
            }
            for up in table.true_ups
        ],
        "gateway_spend_without_provider": float(table.unknown_provider),
        "lines_without_rate": table.unconverted,
    }

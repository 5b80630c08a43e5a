"""A what-if beside the month: each team's total before and after, and the difference.

Both columns are the report's own printed totals (each a footed report), so the "before" column
is the figure the month's report prints, and both columns add up to their report's total.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from exporter.finance.report.cells import csv_text
from exporter.finance.report.figures import Report
from exporter.finance.report.writing import Cells
from exporter.ledger.attribution import IDLE, OTHER, UNALLOCATED

__all__ = [
    "WhatIfRow",
    "WhatIfTable",
    "what_if_csv",
    "what_if_headline",
    "what_if_json",
    "what_if_lines",
    "what_if_table",
    "what_if_text",
]

HEAD = ("team", "before", "after", "difference")


@dataclass(frozen=True)
class WhatIfRow:
    """One team's printed total in the month and under the what-if."""

    team: str
    before: Decimal
    after: Decimal

    @property
    def difference(self) -> Decimal:
        """After less before: what the change would have cost the team (negative: saved)."""
        return self.after - self.before


@dataclass(frozen=True)
class WhatIfTable:
    """The settings changed, every team's row, both totals and what the change rests on."""

    given: tuple[str, ...]
    policy: tuple[str, str]  # the idle policy before and after
    rows: tuple[WhatIfRow, ...]
    before: Decimal
    after: Decimal
    notes: tuple[str, ...] = ()

    @property
    def difference(self) -> Decimal:
        """The change of the whole month (zero, but for a change in what a provider billed)."""
        return self.after - self.before


def _order(team: str) -> tuple[int, str]:
    # The report's row order: teams by name, then the reserved rows.
    return {OTHER: 1, IDLE: 2, UNALLOCATED: 3}.get(team, 0), team


def what_if_table(
    before: Report,
    after: Report,
    given: Sequence[str],
    policy: tuple[str, str],
    notes: Sequence[str] = (),
    team: str | None = None,
) -> WhatIfTable:
    """The two reports' team totals side by side; a team absent from one has 0 there."""
    old = {r.team: r.total for r in before.rows}
    new = {r.team: r.total for r in after.rows}
    teams = sorted(old.keys() | new.keys(), key=_order)
    if team is not None:
        teams = [t for t in teams if t == team]
    rows = tuple(WhatIfRow(t, old.get(t, Decimal(0)), new.get(t, Decimal(0))) for t in teams)
    totals = (before.total, after.total)
    if team is not None:
        # One team's table foots to its own row, as its report does.
        totals = (
            sum((r.before for r in rows), Decimal(0)),
            sum((r.after for r in rows), Decimal(0)),
        )
    return WhatIfTable(tuple(given), policy, rows, *totals, notes=tuple(notes))


def what_if_lines(table: WhatIfTable, cells: Cells) -> list[list[str]]:
    """Header, a row per team, then the totals."""
    lines = [[cells.head(h) for h in HEAD]]
    for r in table.rows:
        figures = (r.before, r.after, r.difference)
        lines.append([cells.name("team", r.team), *map(cells.money, figures)])
    totals = (table.before, table.after, table.difference)
    lines.append([cells.total, *map(cells.money, totals)])
    return lines


def what_if_headline(table: WhatIfTable) -> list[str]:
    """What was changed and on what the after column rests, one line each."""
    lines = [f"What if: {', '.join(table.given)}"]
    before, after = table.policy
    policy = before if before == after else f"{before} before, {after} after"
    lines.append(f"Idle policy: {policy}")
    lines += table.notes
    return lines


def what_if_text(table: WhatIfTable, cells: Cells) -> str:
    """The what-if as the text report's last table."""
    rows = what_if_lines(table, cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    rule = "  ".join("-" * w for w in widths)
    out = ["", *what_if_headline(table), ""]
    for i, row in enumerate(rows):
        padded = [
            row[0].ljust(widths[0]),
            *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)),
        ]
        out.append("  ".join(padded).rstrip())
        if i in (0, len(rows) - 2):
            out.append(rule)
    return "\n".join(out) + "\n"


def what_if_csv(table: WhatIfTable, currency: str, cells: Cells) -> str:
    """The what-if table as CSV: team, before, after, difference and the currency."""
    head, *rows = what_if_lines(table, cells)
    lines = [[*row, currency] for row in rows]
    # The team (an upstream's name) and the currency may not become spreadsheet formulas.
    return csv_text([*head, "currency"], lines, [0, len(head)])


def what_if_json(table: WhatIfTable) -> dict[str, Any]:
    """The what-if as the JSON report's `what_if` object."""
    return {
        "given": list(table.given),
        "idle_policy": {"before": table.policy[0], "after": table.policy[1]},
        "notes": list(table.notes),
        "teams": [
            {
                "team": r.team,
                "before": float(r.before),
                "after": float(r.after),
                "difference": float(r.difference),
            }
            for r in table.rows
        ],
        "total": {
            "before": float(table.before),
            "after": float(table.after),
            "difference": float(table.difference),
        },
    }

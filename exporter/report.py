"""The month-to-date chargeback table for finance: table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass

from exporter.attribution import IDLE, OTHER, UNALLOCATED
from exporter.chargeback import Ledger
from exporter.metrics import COMPONENTS

__all__ = ["Report", "build_report", "format_report"]

TOTAL = "total"


@dataclass(frozen=True)
class Report:
    """Rows of (team, cost per component, total, budget), the grand total and shares."""

    currency: str
    month: str  # YYYY-MM in the configured time zone
    components: tuple[str, ...]
    rows: tuple[tuple[str, Mapping[str, float], float, float | None], ...]
    total: float
    unallocated: float
    idle: float

    @property
    def unallocated_share(self) -> float:
        """Unallocated cost as a percentage of the total (0 when nothing was spent)."""
        return 100.0 * self.unallocated / self.total if self.total else 0.0


def _row_order(team: str) -> tuple[int, str]:
    # Teams first by name, then the reserved rows in a fixed order finance can rely on.
    reserved = {OTHER: 1, IDLE: 2, UNALLOCATED: 3}
    return reserved.get(team, 0), team


def build_report(
    ledger: Ledger, currency: str, month: str, budgets: Mapping[tuple[str, str], float]
) -> Report:
    """Turn a month-to-date ledger into rows; `__idle__` and `__unallocated__` always show."""
    by_team = ledger.by_team()
    for reserved in (IDLE, UNALLOCATED):
        by_team.setdefault(reserved, {})
    used = {c for costs in by_team.values() for c in costs}
    components = tuple(c for c in COMPONENTS if c in used)
    rows = []
    for team in sorted(by_team, key=_row_order):
        costs = by_team[team]
        team_budgets = [v for (t, _), v in budgets.items() if t == team]
        budget = sum(team_budgets) if team_budgets else None
        rows.append((team, costs, sum(costs.values()), budget))
    total = ledger.total()
    return Report(
        currency,
        month,
        components,
        tuple(rows),
        total,
        sum(by_team[UNALLOCATED].values()),
        sum(by_team[IDLE].values()),
    )


def format_report(report: Report, fmt: str) -> str:
    """Render the report as `table`, `csv` or `json`."""
    if fmt == "json":
        return _json(report)
    if fmt == "csv":
        return _csv(report)
    return _table(report)


def _json(report: Report) -> str:
    payload = {
        "currency": report.currency,
        "month": report.month,
        "unallocated_share_percent": round(report.unallocated_share, 4),
        "total": round(report.total, 2),
        "teams": [
            {
                "team": team,
                "components": {c: round(costs.get(c, 0.0), 2) for c in report.components},
                "total": round(total, 2),
                "budget": budget,
            }
            for team, costs, total, budget in report.rows
        ],
    }
    return json.dumps(payload, indent=2) + "\n"


def _csv(report: Report) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["team", *report.components, TOTAL, "budget", "currency"])
    for team, costs, total, budget in report.rows:
        cells = [f"{costs.get(c, 0.0):.2f}" for c in report.components]
        writer.writerow(
            [
                team,
                *cells,
                f"{total:.2f}",
                "" if budget is None else f"{budget:.2f}",
                report.currency,
            ]
        )
    sums = [f"{sum(r[1].get(c, 0.0) for r in report.rows):.2f}" for c in report.components]
    writer.writerow([TOTAL, *sums, f"{report.total:.2f}", "", report.currency])
    return out.getvalue()


def _table(report: Report) -> str:
    header = ["team", *report.components, TOTAL, "budget"]
    body = []
    for team, costs, total, budget in report.rows:
        cells = [f"{costs.get(c, 0.0):,.2f}" for c in report.components]
        body.append([team, *cells, f"{total:,.2f}", "" if budget is None else f"{budget:,.2f}"])
    sums = [f"{sum(r[1].get(c, 0.0) for r in report.rows):,.2f}" for c in report.components]
    body.append([TOTAL, *sums, f"{report.total:,.2f}", ""])
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = [
        f"Chargeback {report.month}, month to date, in {report.currency}",
        f"Unallocated: {report.unallocated_share:.1f} % "
        f"({report.unallocated:,.2f} of {report.total:,.2f}); idle: {report.idle:,.2f}",
        "",
    ]
    rule = "  ".join("-" * w for w in widths)
    for i, row in enumerate([header, *body]):
        if i == len(body):  # the total row gets a rule above it
            lines.append(rule)
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
        if i == 0:
            lines.append(rule)
    return "\n".join(lines) + "\n"

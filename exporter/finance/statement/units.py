"""The statement's unit-economics tables, in the statement's locale (never scientific notation)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from exporter.finance.report.figure_formats import Formats, local_formats
from exporter.finance.report.gpu_month import gpu_table, gpu_words, serving_of
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.text_tables import UnitTable, capitalised
from exporter.finance.report.units import for_team, unit_tables
from exporter.finance.statement.figures import Statement

__all__ = ["SNAPSHOTS", "gpu_html", "statement_formats", "table_html", "unit_tables_html"]

# Tables of an instant rather than of the month (left out of the statement).
SNAPSHOTS = frozenset({"gpu_energy_now"})


def statement_formats(numbers: Numbers) -> Formats:
    """The unit tables' figures as the statement prints its own."""
    return local_formats(numbers)


def unit_tables_html(statement: Statement, numbers: Numbers) -> list[str]:
    """The unit-economics tables of a statement (a team's: its own rows only), as HTML."""
    report = statement.report
    units = report.units
    if units is None:
        return []
    if statement.team is not None:
        units = for_team(units, statement.team)
    found: list[UnitTable] = unit_tables(
        units, report.currency, report.closed, statement_formats(numbers), serving_of(report)
    )
    # The draw when the page was made is no figure of the month: a statement is the month's
    # record, printed and filed, and one instant's watts would read as the month's. The
    # dashboards and the text report show it live.
    monthly = [t for t in found if t.key not in SNAPSHOTS]
    return [table_html(t.head, t.rows, t.numeric_from, t.title) for t in monthly]


def gpu_html(statement: Statement, numbers: Numbers) -> list[str]:
    """The period's GPU operation: a table, or in words what is not known and why."""
    report = statement.report
    if report.gpu is None:
        return []
    span = "closed month" if report.closed else "month to date"
    table = gpu_table(report.gpu, span, statement_formats(numbers), statement.team)
    if table is None:
        words = gpu_words(report.gpu, span) or f"GPU operation, {span}: not known"
        return [f"<p>{html.escape(words)}</p>"]
    return [table_html(table.head, table.rows, table.numeric_from, table.title)]


def table_html(
    head: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int, caption: str
) -> str:
    """A table without a total row, that scrolls on a narrow screen (as the statement's)."""
    out = [
        f'<div class="table" role="region" tabindex="0" aria-label="{html.escape(caption)}">'
        f"<table><caption>{html.escape(caption)}</caption><thead><tr>"
    ]
    out += [f'<th scope="col">{html.escape(capitalised(h))}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        cells = [f'<th scope="row">{html.escape(row[0])}</th>']
        for j, cell in enumerate(row[1:], start=1):
            css = ' class="num"' if j >= numeric_from else ""
            cells.append(f"<td{css}>{html.escape(cell)}</td>")
        out.append(f"<tr>{''.join(cells)}</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)

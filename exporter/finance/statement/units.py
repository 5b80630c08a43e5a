"""The statement's unit-economics tables, in the statement's locale (never scientific notation)."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from decimal import Decimal

from babel.numbers import format_decimal

from exporter.finance.report.gpu_month import gpu_table, gpu_words, serving_of
from exporter.finance.report.units import Formats, UnitTable, for_team, unit_tables
from exporter.finance.statement import labels
from exporter.finance.statement.figures import Statement
from exporter.finance.statement.numbers import Numbers

__all__ = ["WORDS", "gpu_html", "statement_formats", "table_html", "unit_tables_html"]

# The unit tables' identifiers in people's words (kinds of model come from labels.KINDS).
WORDS = {
    "model": "GPU model",
    "flavor": "Kueue flavor",
    "config": "Configured price",
    "price_build": "Built from its parts",
    "opencost_charge": "OpenCost's charge",
    "opencost_assets": "OpenCost's node assets",
    "config_models": "Its models' configured prices",
    "cluster_average": "Cluster average",
    "flavor_price": "Its flavor's price",
    "nameplate": "Nameplate",
    "measured": "Measured",
    "list price": "List price",
    "configured": "Configured",
}


def statement_formats(numbers: Numbers) -> Formats:
    """The unit tables' figures as the statement prints its own."""

    def pattern(text: str) -> Callable[[float | None], str]:
        def formatted(value: float | None) -> str:
            if value is None:
                return ""
            return str(format_decimal(Decimal(repr(value)), text, locale=numbers.locale))

        return formatted

    return Formats(
        money=lambda v: "" if v is None else numbers.amount(round(Decimal(repr(v)), 2)),
        fine=pattern("#,##0.0000"),
        count=numbers.count,
        ratio=lambda v: "" if v is None else numbers.percent(100 * v),
        plain=pattern("#,##0.00"),
        team=labels.team,
        word=lambda w: WORDS.get(w, labels.kind(w)),
    )


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
    return [table_html(t.head, t.rows, t.numeric_from, t.title) for t in found]


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
    out += [f'<th scope="col">{html.escape(_capitalised(h))}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        cells = [f'<th scope="row">{html.escape(row[0])}</th>']
        for j, cell in enumerate(row[1:], start=1):
            css = ' class="num"' if j >= numeric_from else ""
            cells.append(f"<td{css}>{html.escape(cell)}</td>")
        out.append(f"<tr>{''.join(cells)}</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _capitalised(header: str) -> str:
    # "kind" -> "Kind"; a unit spelled with its own capitals ("kWh", "g CO2e") stays as it is.
    return header[:1].upper() + header[1:] if header[1:2].islower() else header

"""The statement as one self-contained HTML page: inline SVG charts (pygal), tables, no script.

pygal draws the charts in Python as SVG, so the page needs no JavaScript and no network when
it is viewed; its chart script and its generator comment (which carries the day it ran) are
stripped, so the same figures always give the same bytes. Every name that came from an
upstream (teams, models) is escaped: by the XML serializer inside the charts, by
`html.escape` everywhere else. The page forbids scripts outright (Content-Security-Policy).
"""

from __future__ import annotations

import html
import sys
from collections.abc import Callable, Iterable, Sequence
from string import Template
from typing import Any

import pygal
from pygal.style import Style

from exporter.finance.report import QUOTA_BASIS, table_lines
from exporter.finance.statement.figures import Statement
from exporter.finance.statement.page import CSP, PAGE

__all__ = ["CHARTS", "statement_html"]

# pygal appends to sys.meta_path a finder for its map plug-ins (unused here) that has only the
# old `find_module` API: on Python 3.11 every import that reaches it raises an ImportWarning
# (an error under the tests' filterwarnings). Nothing here needs it (Kozea/pygal#532 is the
# upstream fix, not released).
sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, pygal.PluginImportFixer)]

# The charts' ids on the page (each SVG is `svg#chart-<id>`), in page order.
CHARTS = ("teams", "idle", "borrowing", "llm", "budgets")

_STYLE = Style(
    font_family="DejaVu Sans, Liberation Sans, Arial, sans-serif",
    background="#ffffff",
    plot_background="#ffffff",
    colors=(
        "#1f77b4",
        "#ff7f0e",
        "#2ca02c",
        "#d62728",
        "#9467bd",
        "#8c564b",
        "#e377c2",
        "#7f7f7f",
        "#bcbd22",
        "#17becf",
        "#393b79",
    ),
    title_font_size=15,
    legend_font_size=12,
    label_font_size=11,
    major_label_font_size=11,
)


def _figure(value: float) -> str:
    # The text table's format, so a value read off a chart reads like the table's cell.
    return format(value, ",.2f")


def _chart(kind: Callable[..., Any], chart_id: str, title: str, **options: Any) -> Any:
    chart = kind(
        title=title,
        style=_STYLE,
        js=[],
        disable_xml_declaration=True,
        width=960,
        height=420,
        truncate_label=-1,
        truncate_legend=-1,
        legend_at_bottom=True,
        value_formatter=_figure,
        **options,
    )
    # The id prefixes the chart's CSS; a fixed one keeps the page reproducible.
    chart.uuid = chart_id
    chart.xml_filters.append(_without_scripts)
    return chart


def _without_scripts(root: Any) -> Any:
    """Drop pygal's config script (its tooltips need a script from the web) and comments."""
    for parent in list(root.iter()):
        for child in list(parent):
            tag = child.tag
            if not isinstance(tag, str) or tag.rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    return root


def _svg(chart: Any) -> str:
    return str(chart.render(is_unicode=True))


def _teams(statement: Statement) -> str:
    report = statement.report
    chart = _chart(pygal.StackedBar, "teams", f"Cost per team by component ({report.currency})")
    chart.x_labels = [row.team for row in report.rows]
    for component in report.components:
        chart.add(component, [float(row.costs[component]) for row in report.rows])
    return _svg(chart)


def _idle(statement: Statement) -> str:
    report = statement.report
    chart = _chart(
        pygal.HorizontalBar,
        "idle",
        f"Idle {_figure(float(report.idle))} {report.currency}: where it went",
    )
    chart.x_labels = [name for name, _ in statement.idle]
    chart.add("idle", [float(amount) for _, amount in statement.idle])
    return _svg(chart)


def _borrowing(statement: Statement) -> str:
    if not statement.borrowing:
        return _note("No team borrowed or lent quota this month.")
    chart = _chart(pygal.Bar, "borrowing", f"Quota borrowed and lent ({statement.report.currency})")
    chart.x_labels = [team for team, _, _ in statement.borrowing]
    chart.add("borrowed", [float(b) for _, b, _ in statement.borrowing])
    chart.add("lent", [float(lent) for _, _, lent in statement.borrowing])
    return _svg(chart)


def _llm(statement: Statement) -> str:
    if not statement.llm_spend:
        return _note("No LLM spend this month.")
    chart = _chart(pygal.StackedBar, "llm", "LLM spend per team and model")
    chart.x_labels = list(statement.llm_teams)
    for model, spend in statement.llm_spend.items():
        chart.add(model, [float(v) for v in spend])
    return _svg(chart)


def _budgets(statement: Statement) -> str:
    if not statement.budgets:
        return _note("No budgets are configured.")
    span = "month end" if statement.report.closed else "forecast at month end"
    chart = _chart(pygal.Bar, "budgets", f"Budgets against actuals ({statement.report.currency})")
    chart.x_labels = [f"{line.team} ({line.kind})" for line in statement.budgets]
    chart.add("budget", [float(line.budget) for line in statement.budgets])
    chart.add("month to date", [float(line.actual) for line in statement.budgets])
    chart.add(span, [float(line.forecast) for line in statement.budgets])
    return _svg(chart)


def _note(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>'


def _table(lines: Sequence[Sequence[str]], numeric_from: int, caption: str) -> str:
    """The text report's cells as an HTML table; its last line is the total row."""
    head, *body = lines
    out = [f"<table><caption>{html.escape(caption)}</caption><thead><tr>"]
    out += [f'<th scope="col">{html.escape(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for i, row in enumerate(body):
        total = ' class="total"' if i == len(body) - 1 else ""
        cells = [f'<th scope="row">{html.escape(row[0])}</th>']
        for j, cell in enumerate(row[1:], start=1):
            css = ' class="num"' if j >= numeric_from else ""
            cells.append(f"<td{css}>{html.escape(cell)}</td>")
        out.append(f"<tr{total}>{''.join(cells)}</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _headline(statement: Statement) -> str:
    report = statement.report
    money = report.currency

    def card(label: str, value: str, detail: str) -> str:
        return (
            f'<div class="card"><div class="label">{html.escape(label)}</div>'
            f'<div class="value">{html.escape(value)}</div>'
            f'<div class="detail">{html.escape(detail)}</div></div>'
        )

    cards = [
        card("Total", f"{report.total:,.2f} {money}", "every team, every component"),
        card(
            "Unallocated",
            f"{report.unallocated_share:.1f} %",
            f"{report.unallocated:,.2f} of {report.total:,.2f} {money}",
        ),
        card(
            "Idle",
            f"{report.idle:,.2f} {money}",
            f"{report.idle_shared:,.2f} shared onto teams",
        ),
    ]
    if report.models:
        cards.append(card("LLM models", f"{report.model_spend:,.2f} {money}", "spend, every model"))
    return "".join(cards)


def _notes(statement: Statement) -> Iterable[str]:
    report = statement.report
    if report.quota_basis is not None:
        yield _note(QUOTA_BASIS[report.quota_basis] + ".")
    if statement.budgets and not report.closed:
        yield _note(
            "Forecast: month to date plus the current hourly rate for the hours left in the month."
        )


def statement_html(statement: Statement) -> str:
    """The whole page: headline figures, the five charts, then the report's tables."""
    report = statement.report
    span = "closed month" if report.closed else "month to date"
    teams, models = table_lines(report)
    tables = [_table(teams, 1, f"Cost per team and component ({report.currency})")]
    if report.models:
        caption = f"LLM models, {span} (cost per token in {report.currency})"
        tables.append(_table(models, 2, caption))
    page = Template(PAGE).substitute(
        csp=CSP,
        title=html.escape(f"Chargeback {report.month}"),
        subtitle=html.escape(
            f"{span}, in {report.currency}, as of {statement.at:%Y-%m-%d %H:%M %Z}"
        ),
        headline=_headline(statement),
        teams=_teams(statement),
        idle=_idle(statement),
        borrowing=_borrowing(statement),
        llm=_llm(statement),
        budgets=_budgets(statement),
        notes="".join(_notes(statement)),
        tables="".join(tables),
    )
    return page

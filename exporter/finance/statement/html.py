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
from decimal import Decimal
from string import Template
from typing import Any

import pygal
from pygal.style import Style

from exporter.finance.report import QUOTA_BASIS, Report
from exporter.finance.statement import labels
from exporter.finance.statement.figures import ABSORBED, Statement
from exporter.finance.statement.numbers import Numbers
from exporter.finance.statement.operations import (
    USAGE_HEAD,
    backlog_lines,
    usage_cards,
    usage_cells,
    usage_totals,
)
from exporter.finance.statement.page import CSP, PAGE
from exporter.finance.statement.units import unit_tables_html
from exporter.finance.statement.weights import weight_tables_html
from exporter.ledger.attribution import IDLE, OTHER

__all__ = [
    "CHARTS",
    "CREDITS",
    "FORECAST",
    "LENT",
    "SPENT",
    "TO_DATE",
    "budget_label",
    "model_lines",
    "statement_html",
    "team_lines",
]

# pygal appends to sys.meta_path a finder for its map plug-ins (unused here) that has only the
# old `find_module` API: on Python 3.11 every import that reaches it raises an ImportWarning
# (an error under the tests' filterwarnings). Nothing here needs it (Kozea/pygal#532 is the
# upstream fix, not released).
sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, pygal.PluginImportFixer)]

# The charts' ids on the page (each SVG is `svg#chart-<id>`), in page order.
CHARTS = ("teams", "idle", "borrowing", "llm", "budgets")
# Series names the tests read back.
CREDITS = "Credits"
LENT = "Quota lent (credit)"
SPENT = "Spent"
TO_DATE = "Month to date"
FORECAST = "Forecast at month end"
COUNTS = ("prompt_tokens", "completion_tokens", "requests")

_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#d62728",
    "#637939",
)
# Credits (quota lent, a serving team's cost moved onto the senders) are drawn apart, in green
# below zero, never as one more stacked component.
_CREDIT = "#2ca02c"


def _style(colors: Sequence[str]) -> Style:
    return Style(
        font_family="DejaVu Sans, Liberation Sans, Arial, sans-serif",
        background="#ffffff",
        plot_background="#ffffff",
        colors=tuple(colors) or _PALETTE,
        title_font_size=15,
        legend_font_size=12,
        label_font_size=11,
        major_label_font_size=11,
        value_font_size=10,
        value_colors=("#1d2330",),
    )


def _chart(
    kind: Callable[..., Any],
    chart_id: str,
    title: str,
    numbers: Numbers,
    colors: Sequence[str] = _PALETTE,
    **options: Any,
) -> Any:
    chart = kind(
        title=title,
        style=_style(colors),
        js=[],
        disable_xml_declaration=True,
        width=960,
        height=440,
        truncate_label=-1,
        truncate_legend=-1,
        legend_at_bottom=True,
        # Each bar says its figure: the page has no script, so no tooltip would.
        print_values=True,
        print_zeroes=False,
        value_formatter=numbers.amount,
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


def _or_none(value: Decimal) -> float | None:
    # An empty cell draws no bar (and no "0,00" label).
    return float(value) if value else None


def _teams(statement: Statement, numbers: Numbers) -> str:
    report = statement.report
    title = f"Cost per team by component ({numbers.symbol})"
    components = [c for c in report.components if any(r.costs[c] > 0 for r in report.rows)]
    colors = [*_PALETTE[: len(components)], _CREDIT]
    chart = _chart(pygal.StackedBar, "teams", title, numbers, colors)
    chart.x_labels = [labels.team(row.team) for row in report.rows]
    for component in components:
        chart.add(
            labels.component(component),
            [_or_none(max(row.costs[component], Decimal(0))) for row in report.rows],
        )
    credits = [sum((v for v in r.costs.values() if v < 0), Decimal(0)) for r in report.rows]
    if any(credits):
        chart.add(CREDITS, [_or_none(c) for c in credits])
    return _svg(chart)


def _idle(statement: Statement, numbers: Numbers) -> str:
    if not statement.idle:
        return _note("No idle capacity was charged to this team.")
    title = f"Idle capacity, {numbers.money(statement.report.idle)}: where it went"
    chart = _chart(pygal.HorizontalBar, "idle", title, numbers)
    chart.x_labels = [_idle_label(name) for name, _ in statement.idle]
    chart.add("Idle capacity", [float(amount) for _, amount in statement.idle])
    return _svg(chart)


def _idle_label(name: str) -> str:
    if name == ABSORBED:
        return "Absorbed by reservations"
    return "Left idle" if name == IDLE else labels.team(name)


def _borrowing(statement: Statement, numbers: Numbers) -> str:
    if not statement.borrowing:
        return _note("No quota was borrowed or lent this month.")
    title = f"Quota borrowed and lent ({numbers.symbol})"
    chart = _chart(pygal.Bar, "borrowing", title, numbers, (_PALETTE[0], _CREDIT))
    chart.x_labels = [labels.team(team) for team, _, _ in statement.borrowing]
    chart.add(labels.component("borrowed"), [_or_none(b) for _, b, _ in statement.borrowing])
    chart.add(LENT, [_or_none(lent) for _, _, lent in statement.borrowing])
    return _svg(chart)


def _llm(statement: Statement, numbers: Numbers) -> str:
    if not statement.llm_spend:
        return _note("No LLM spend this month.")
    title = f"LLM spend per team and model ({numbers.symbol})"
    chart = _chart(pygal.StackedBar, "llm", title, numbers)
    chart.x_labels = [labels.team(t) for t in statement.llm_teams]
    for model, spend in statement.llm_spend.items():
        chart.add(model, [_or_none(v) for v in spend])
    return _svg(chart)


def _budgets(statement: Statement, numbers: Numbers) -> str:
    if not statement.budgets:
        return _note("No budgets are configured.")
    closed = statement.report.closed
    title = f"Budgets against {'spend' if closed else 'month to date'} ({numbers.symbol})"
    chart = _chart(pygal.Bar, "budgets", title, numbers)
    chart.x_labels = [budget_label(line.team, line.kind) for line in statement.budgets]
    chart.add("Budget", [float(line.budget) for line in statement.budgets])
    # A closed month's forecast is what it spent: one bar, not two equal ones.
    chart.add(SPENT if closed else TO_DATE, [float(line.actual) for line in statement.budgets])
    if not closed:
        chart.add(FORECAST, [float(line.forecast) for line in statement.budgets])
    return _svg(chart)


def budget_label(team: str, kind: str) -> str:
    """A budget's bar: the team and the kind, `research (GPU)`."""
    return f"{labels.team(team)} ({labels.kind(kind)})"


def _note(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>'


def _table(lines: Sequence[Sequence[str]], numeric_from: int, caption: str) -> str:
    """Header, rows and, last, the total row, as a table that scrolls on a narrow screen."""
    head, *body = lines
    out = [
        f'<div class="table" role="region" tabindex="0" aria-label="{html.escape(caption)}">'
        f"<table><caption>{html.escape(caption)}</caption><thead><tr>"
    ]
    out += [f'<th scope="col">{html.escape(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for i, row in enumerate(body):
        total = ' class="total"' if i == len(body) - 1 else ""
        cells = [f'<th scope="row">{html.escape(row[0])}</th>']
        for j, cell in enumerate(row[1:], start=1):
            css = ' class="num"' if j >= numeric_from else ""
            cells.append(f"<td{css}>{html.escape(cell)}</td>")
        out.append(f"<tr{total}>{''.join(cells)}</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def team_lines(statement: Statement, numbers: Numbers) -> list[list[str]]:
    """The teams table: a row per team, then the totals; labels for people."""
    report = statement.report
    components = [labels.component(c) for c in report.components]
    lines = [["Team", *components, "Total", "GPU budget", "LLM budget", *USAGE_HEAD]]

    def opt(value: Decimal | None) -> str:
        return "" if value is None else numbers.amount(value)

    for row in report.rows:
        cells = [numbers.amount(row.costs[c]) for c in report.components]
        budgets = [opt(row.budget_gpu), opt(row.budget_llm)]
        usage = usage_cells(report.usage.get(row.team), numbers)
        lines.append([labels.team(row.team), *cells, numbers.amount(row.total), *budgets, *usage])
    if statement.team is None:
        sums = [numbers.amount(report.columns[c]) for c in report.components]
        gpu = [r.budget_gpu for r in report.rows if r.budget_gpu is not None]
        llm = [r.budget_llm for r in report.rows if r.budget_llm is not None]
        budgets = [numbers.amount(sum(b, Decimal(0))) if b else "" for b in (gpu, llm)]
        usage = usage_totals((report.usage.get(r.team) for r in report.rows), numbers)
        lines.append(["Total", *sums, numbers.amount(report.total), *budgets, *usage])
    return lines


def dimension_lines(report: Report, numbers: Numbers) -> list[list[str]]:
    """A dimension's table: a row per value, then the totals (the same total as the teams)."""
    components = [labels.component(c) for c in report.components]
    lines = [[report.by.capitalize(), *components, "Total"]]
    for row in report.rows:
        cells = [numbers.amount(row.costs[c]) for c in report.components]
        name = "Other values" if row.team == OTHER else labels.team(row.team)
        lines.append([name, *cells, numbers.amount(row.total)])
    sums = [numbers.amount(report.columns[c]) for c in report.components]
    lines.append(["Total", *sums, numbers.amount(report.total)])
    return lines


def model_lines(statement: Statement, numbers: Numbers) -> list[list[str]]:
    """The models table: spend, tokens and prices per million tokens, then the totals."""
    per = f"{numbers.symbol} per million tokens"
    head = ["Model", "Kind", "Spend", "Prompt tokens", "Completion tokens", "Requests"]
    prices = ["Declared", "Measured", "Recommended, input", "Recommended, output"]
    lines = [[*head, *(f"{p} ({per})" for p in prices)]]

    def price(value: float | None) -> str:
        return "" if value is None else numbers.per_million(value)

    models = statement.report.models
    for m in models:
        counts = [numbers.count(n) for n in (m.prompt_tokens, m.completion_tokens, m.requests)]
        values = (m.declared, m.measured, m.recommended_input, m.recommended_output)
        spend = numbers.amount(m.spend)
        lines.append([m.model, labels.kind(m.kind), spend, *counts, *map(price, values)])
    totals = [sum(getattr(m, f) for m in models) for f in COUNTS]
    spend = numbers.amount(statement.report.model_spend)
    lines.append(["Total", "", spend, *map(numbers.count, totals), "", "", "", ""])
    return lines


def _backlog(statement: Statement, numbers: Numbers) -> list[str]:
    """The labelling backlog's two lists, each a table with its total, when it has rows."""
    backlog, span = statement.report.backlog, _span(statement)
    if backlog is None:
        return []
    out = []
    if backlog.unallocated:
        caption = f"Labelling backlog: unallocated cost by workload, {span}"
        out.append(_table(backlog_lines(backlog, backlog.unallocated, numbers, False), 3, caption))
    if backlog.fallback:
        caption = f"Placed only by a fallback key, {span}"
        out.append(_table(backlog_lines(backlog, backlog.fallback, numbers, True), 3, caption))
    return out


def _span(statement: Statement) -> str:
    return "closed month" if statement.report.closed else "month to date"


def _headline(statement: Statement, numbers: Numbers) -> str:
    report = statement.report

    def card(label: str, value: str, detail: str) -> str:
        return (
            f'<div class="card"><p class="label">{html.escape(label)}</p>'
            f'<p class="value">{html.escape(value)}</p>'
            f'<p class="detail">{html.escape(detail)}</p></div>'
        )

    if statement.team is not None:
        (row,) = report.rows
        cards = [card("Total", numbers.money(row.total), "every component")]
        for kind, budget in (("GPU", row.budget_gpu), ("LLM", row.budget_llm)):
            if budget is not None:
                cards.append(card(f"{kind} budget", numbers.money(budget), "for the month"))
        cards += usage_cards(report.usage.get(row.team), numbers, card)
        return "".join(cards)
    cards = [
        card("Total", numbers.money(report.total), "every team, every component"),
        card(
            "Unallocated",
            numbers.percent(report.unallocated_share),
            f"{numbers.money(report.unallocated)} of {numbers.money(report.total)}",
        ),
        card(
            "Idle capacity",
            numbers.money(report.idle),
            f"{numbers.money(report.idle_shared)} shared onto teams",
        ),
    ]
    if report.models:
        cards.append(card("LLM models", numbers.money(report.model_spend), "spend, every model"))
    return "".join(cards)


def _notes(statement: Statement) -> Iterable[str]:
    report = statement.report
    if report.quota_basis is not None:
        yield _note(QUOTA_BASIS[report.quota_basis] + ".")
    if statement.budgets and not report.closed:
        yield _note(
            "Forecast: month to date plus the current hourly rate for the hours left in the month."
        )
    if any(v < 0 for r in report.rows for v in r.costs.values()):
        yield _note(
            "Credits (quota lent, a self-hosted model's cost moved onto the teams that sent it "
            "tokens) are drawn in green below zero."
        )


def _subtitle(statement: Statement) -> str:
    report = statement.report
    money = f"figures in {report.currency}"
    if report.closed:
        return f"Closed month, {money}, days in {statement.zone}"
    return f"Month to date, {money}, as of {statement.at:%Y-%m-%d %H:%M %Z} ({statement.zone})"


def statement_html(statement: Statement, numbers: Numbers) -> str:
    """The whole page: headline figures, the five charts, then the tables."""
    report = statement.report
    span = "closed month" if report.closed else "month to date"
    who = f"{labels.team(statement.team)}, " if statement.team else ""
    where = f" of {statement.cluster}" if statement.cluster else ""
    tables = [
        _table(
            team_lines(statement, numbers), 1, f"Cost per team and component ({report.currency})"
        )
    ]
    if report.models and statement.team is None:
        caption = f"LLM models, {span} (spend in {report.currency})"
        tables.append(_table(model_lines(statement, numbers), 2, caption))
    tables += weight_tables_html(statement, numbers)
    tables += _backlog(statement, numbers)
    tables += unit_tables_html(statement, numbers)
    # After the team and model tables: each dimension's month, to the same total.
    for dimension in statement.dimensions:
        caption = f"Cost per {dimension.by} and component ({report.currency})"
        tables.append(_table(dimension_lines(dimension, numbers), 1, caption))
    return Template(PAGE).substitute(
        csp=CSP,
        title=html.escape(f"Chargeback {report.month}{where}: {who}{span}"),
        subtitle=html.escape(_subtitle(statement)),
        headline=_headline(statement, numbers),
        teams=_teams(statement, numbers),
        idle=_idle(statement, numbers),
        borrowing=_borrowing(statement, numbers),
        llm=_llm(statement, numbers),
        budgets=_budgets(statement, numbers),
        notes="".join(_notes(statement)),
        tables="".join(tables),
    )

"""The statement's tables of figures: teams, models, weights, backlog, unit economics, dimensions.

Every cell that came from an upstream (teams, models) is escaped with `html.escape`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from decimal import Decimal

from exporter.finance.report import labels
from exporter.finance.report.figures import Report
from exporter.finance.report.forecast import forecast_lines
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.queues import queue_lines, team_queue_lines
from exporter.finance.report.teams import OCCUPANCY
from exporter.finance.report.what_if import WhatIfTable, what_if_headline, what_if_lines
from exporter.finance.report.writing import people
from exporter.finance.statement.advice import advice_html
from exporter.finance.statement.figures import Statement
from exporter.finance.statement.operations import USAGE_HEAD, backlog_lines, printed_usage
from exporter.finance.statement.page import note
from exporter.finance.statement.reconciliation import reconciliation_html
from exporter.finance.statement.units import gpu_html, unit_tables_html
from exporter.finance.statement.weights import weight_tables_html
from exporter.ledger.attribution import OTHER

__all__ = ["dimension_lines", "model_lines", "operating_lines", "tables_html", "team_lines"]

COUNTS = ("prompt_tokens", "completion_tokens", "requests")
WEIGHTED = (
    "Declared and measured prices are per weighted token: a prompt token counts once and a "
    "completion token as many times as its model's completion weight, so they are not the "
    "cost of a million tokens as counted (that is in the table of cost per million tokens "
    "by model)."
)


def _table(
    lines: Sequence[Sequence[str]], numeric_from: int, caption: str, *, totalled: bool = True
) -> str:
    """Header, rows and, last, the total row (unless not `totalled`), as a table that scrolls
    on a narrow screen."""
    head, *body = lines
    out = [
        f'<div class="table" role="region" tabindex="0" aria-label="{html.escape(caption)}">'
        f"<table><caption>{html.escape(caption)}</caption><thead><tr>"
    ]
    out += [f'<th scope="col">{html.escape(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for i, row in enumerate(body):
        total = ' class="total"' if totalled and i == len(body) - 1 else ""
        cells = [f'<th scope="row">{html.escape(row[0])}</th>']
        for j, cell in enumerate(row[1:], start=1):
            css = ' class="num"' if j >= numeric_from else ""
            cells.append(f"<td{css}>{html.escape(cell)}</td>")
        out.append(f"<tr{total}>{''.join(cells)}</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def team_lines(statement: Statement, numbers: Numbers) -> list[list[str]]:
    """The cost table: a row per team with its cost per component, then the totals."""
    report = statement.report
    components = [labels.component(c) for c in report.components]
    lines = [["Team", *components, "Total"]]
    for row in report.rows:
        cells = [numbers.amount(row.costs[c]) for c in report.components]
        lines.append([labels.team(row.team), *cells, numbers.amount(row.total)])
    if statement.team is None:
        sums = [numbers.amount(report.columns[c]) for c in report.components]
        lines.append(["Total", *sums, numbers.amount(report.total)])
    return lines


def operating_lines(statement: Statement, numbers: Numbers) -> list[list[str]]:
    """The operating table: a row per team with its budgets and what it used, then the totals.

    With the cost table it is the report's team table, split so that each fits a printed page.
    """
    report = statement.report
    lines = [["Team", "GPU budget", "LLM budget", *USAGE_HEAD]]

    def opt(value: Decimal | None) -> str:
        return "" if value is None else numbers.amount(value)

    usage = printed_usage([report.usage.get(r.team) for r in report.rows], numbers)
    for row, used in zip(report.rows, usage.rows, strict=True):
        budgets = [opt(row.budget_gpu), opt(row.budget_llm)]
        lines.append([labels.team(row.team), *budgets, *used])
    if statement.team is None:
        gpu = [r.budget_gpu for r in report.rows if r.budget_gpu is not None]
        llm = [r.budget_llm for r in report.rows if r.budget_llm is not None]
        budgets = [numbers.amount(sum(b, Decimal(0))) if b else "" for b in (gpu, llm)]
        lines.append(["Total", *budgets, *usage.total])
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
    """The models table: spend, tokens and prices per million weighted tokens, then the totals."""
    per = f"{numbers.symbol} per million weighted tokens"
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


def _queues(statement: Statement, numbers: Numbers) -> list[str]:
    """The queue tables (docs/queues.md): per ClusterQueue, then per team."""
    queues, span = statement.report.queues, _span(statement)
    if queues is None or not (queues.queues or queues.teams):
        return []
    cells = people(numbers)
    caption = (
        f"Kueue ClusterQueues: ceilings and preempted work ({statement.report.currency}), {span}"
    )
    # Figures beside the bill, not parts of it: no total row.
    out = [_table(queue_lines(queues, cells), 2, caption, totalled=False)]
    caption = (
        f"Waiting, borrowing next month, share of the GPU cost (%) and Kueue's weighted "
        f"share per team, {span}"
    )
    out.append(_table(team_queue_lines(queues, cells), 1, caption, totalled=False))
    if queues.missing:
        out.append(note(f"Not read: {', '.join(queues.missing)}; see docs/queues.md."))
    return out


def _span(statement: Statement) -> str:
    return "closed month" if statement.report.closed else "month to date"


def tables_html(statement: Statement, numbers: Numbers) -> list[str]:
    """The page's tables in page order: teams, models, weights, backlog, units, dimensions."""
    report = statement.report
    span = _span(statement)
    caption = f"Cost per team and component ({report.currency})"
    tables = [_table(team_lines(statement, numbers), 1, caption)]
    caption = f"Budgets ({report.currency}) and use per team, {span}"
    tables.append(_table(operating_lines(statement, numbers), 1, caption))
    # Each explanation stands under the table that prints what it explains, when it does.
    if any(u.occupancy_percent is not None for u in report.usage.values()):
        tables.append(note(OCCUPANCY))
    if report.models and statement.team is None:
        caption = f"LLM models, {span} (spend in {report.currency})"
        tables.append(_table(model_lines(statement, numbers), 2, caption))
        if any(m.declared is not None or m.measured is not None for m in report.models):
            tables.append(note(WEIGHTED))
    # The forecast follows the month's own tables: costs, budgets and use, models.
    forecast = forecast_lines(report, people(numbers))
    if forecast and statement.team is not None:
        forecast = [
            forecast[0],
            *(r for r in forecast[1:-1] if r[0] == labels.team(statement.team)),
        ]
    if forecast:
        caption = f"Forecast of the month's end ({report.currency}): low, month end, high"
        tables.append(_table(forecast, 1, caption))
    tables += weight_tables_html(statement, numbers)
    tables += _backlog(statement, numbers)
    tables += advice_html(statement, numbers)
    tables += _queues(statement, numbers)
    tables += gpu_html(statement, numbers)
    tables += unit_tables_html(statement, numbers)
    tables += reconciliation_html(statement, numbers)
    # After the team and model tables: each dimension's month, to the same total.
    for dimension in statement.dimensions:
        caption = f"Cost per {dimension.by} and component ({report.currency})"
        tables.append(_table(dimension_lines(dimension, numbers), 1, caption))
    if statement.what_if is not None:
        tables += _what_if(statement.what_if, numbers, report.currency)
    return tables


def _what_if(table: WhatIfTable, numbers: Numbers, currency: str) -> list[str]:
    """The what-if: what it changed, then each team's total before and after."""
    head, *notes = what_if_headline(table)
    caption = f"{head}: each team's total before and after ({currency})"
    return [*map(note, notes), _table(what_if_lines(table, people(numbers)), 1, caption)]

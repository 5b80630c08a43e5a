"""The report as a text table for people, and the team and model cells CSV shares with it.

The text table says what things are (`Idle capacity`, `Share of idle`, `GPU budget`) in the
configured locale, as the statement does; CSV keeps the identifiers and plain figures.
"""

from __future__ import annotations

from decimal import Decimal

from babel import Locale

from exporter.finance.report.advice import advice_text
from exporter.finance.report.backlog import BacklogTable, backlog_lines
from exporter.finance.report.figure_formats import local_formats
from exporter.finance.report.figures import QUOTA_BASIS, Report
from exporter.finance.report.forecast import forecast_text
from exporter.finance.report.gpu_month import gpu_text, serving_of
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.queues import QueueTable, queue_lines, team_queue_lines
from exporter.finance.report.reconciliation import reconciliation_text
from exporter.finance.report.teams import OCCUPANCY, USAGE_COLUMNS, printed_usage
from exporter.finance.report.text_tables import text_lines
from exporter.finance.report.units import unit_tables
from exporter.finance.report.weights import weight_text
from exporter.finance.report.writing import CSV, Cells, people

__all__ = [
    "ENGLISH",
    "MODEL_COLUMNS",
    "MODEL_NAMES",
    "TOTAL",
    "backlog_text",
    "headline",
    "model_lines",
    "queue_text",
    "report_table",
    "table_lines",
    "team_lines",
]

TOTAL = "total"
# Without a configured locale (a report built outside the command): US English.
ENGLISH = Locale("en", "US")
_PER = (
    "prices per million weighted tokens: a completion token counts as its model's completion "
    "weight in prompt tokens"
)

TEAM_COLUMNS_AFTER = [TOTAL, "budget_gpu", "budget_llm", *(c.name for c in USAGE_COLUMNS)]
MODEL_COLUMNS = [
    "model",
    "kind",
    "spend",
    "prompt_tokens",
    "completion_tokens",
    "requests",
    "declared_per_token",
    "measured_per_token",
    "recommended_input_cost_per_token",
    "recommended_output_cost_per_token",
]
# The model table's cells that carry names (indexes): everything else is a figure we format.
MODEL_NAMES = frozenset({MODEL_COLUMNS.index("model"), MODEL_COLUMNS.index("kind")})


def team_lines(report: Report, cells: Cells = CSV) -> list[list[str]]:
    """Header, team rows and the total row; every printed total is the sum of what is above."""

    def opt(value: Decimal | None) -> str:
        return "" if value is None else cells.money(value)

    def budget_total(values: list[Decimal | None]) -> str:
        present = [v for v in values if v is not None]
        return cells.money(sum(present, Decimal(0))) if present else ""

    # Budgets are per team: a dimension's rows have none, so its table has no budget columns.
    after = TEAM_COLUMNS_AFTER if report.by == "team" else TEAM_COLUMNS_AFTER[:1]
    lines = [[cells.head(c) for c in (report.by, *report.components, *after)]]
    usage = printed_usage([report.usage.get(r.team) for r in report.rows], cells.usage)
    for row, used in zip(report.rows, usage.rows, strict=True):
        costs = [cells.money(row.costs[c]) for c in report.components]
        budgets = [opt(row.budget_gpu), opt(row.budget_llm)]
        name = cells.name(report.by, row.team)
        row_cells = [name, *costs, cells.money(row.total), *budgets, *used]
        lines.append(row_cells[: len(lines[0])])
    sums = [cells.money(report.columns[c]) for c in report.components]
    gpu = budget_total([r.budget_gpu for r in report.rows])
    llm = budget_total([r.budget_llm for r in report.rows])
    total = [cells.total, *sums, cells.money(report.total), gpu, llm, *usage.total]
    lines.append(total[: len(lines[0])])
    return lines


def model_lines(report: Report, cells: Cells = CSV) -> list[list[str]]:
    """The models' rows, then the total row (no header: CSV's is the identifiers)."""

    def opt(value: float | None) -> str:
        return "" if value is None else cells.price(value)

    lines = [
        [
            m.model,
            cells.word(m.kind),
            cells.money(m.spend),
            cells.count(m.prompt_tokens),
            cells.count(m.completion_tokens),
            cells.count(m.requests),
            opt(m.declared),
            opt(m.measured),
            opt(m.recommended_input),
            opt(m.recommended_output),
        ]
        for m in report.models
    ]
    counts = [cells.count(sum(getattr(m, f) for m in report.models)) for f in MODEL_COLUMNS[3:6]]
    lines.append([cells.total, "", cells.money(report.model_spend), *counts, "", "", "", ""])
    return lines


def _aligned(rows: list[list[str]], rule_after: set[int]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    rule = "  ".join("-" * w for w in widths)
    lines = []
    for i, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])]
        cells += [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
        if i in rule_after:
            lines.append(rule)
    return lines


def report_table(report: Report, numbers: Numbers | None = None) -> str:
    """The text table: header lines, teams, models, weights, backlog and unit economics."""
    numbers = numbers or Numbers(ENGLISH, report.currency)
    cells = people(numbers)
    span = "closed month" if report.closed else "month to date"
    teams = team_lines(report, cells)
    lines = [*headline(report, numbers), "", *_aligned(teams, {0, len(teams) - 2})]
    words, forecast = forecast_text(report, cells, numbers.one_decimal)
    if forecast:
        lines += ["", words, "", *_aligned(forecast, {0, len(forecast) - 2})]
    if any(u.occupancy_percent is not None for u in report.usage.values()):
        lines += ["", OCCUPANCY]
    if report.models:
        models = model_text(report, cells)
        lines += ["", f"LLM models, {span} ({_PER})", ""]
        lines += _aligned(models, {0, len(models) - 2})
    formats = local_formats(numbers)
    lines += weight_text(report.weights, formats, numbers)
    if report.backlog is not None:
        lines += ["", *backlog_text(report.backlog, span, cells)]
    if report.queues is not None:
        lines += ["", *queue_text(report.queues, span, cells)]
    lines += gpu_text(report.gpu, span, formats)
    if report.reconciliation is not None:
        lines += ["", *reconciliation_text(report.reconciliation, cells)]
    if report.units is not None:
        serving = serving_of(report)
        tables = unit_tables(report.units, report.currency, report.closed, formats, serving)
        lines += text_lines(tables)
    if report.advice is not None:
        lines += advice_text(report.advice, cells, _aligned)
    return "\n".join(lines) + "\n"


def headline(report: Report, numbers: Numbers) -> list[str]:
    """The lines above the tables: the month, its total, unallocated and idle, and what the
    month's figures rest on."""
    span = "closed month" if report.closed else "month to date"
    money = numbers.amount
    if report.team is not None:
        lines = [f"Chargeback {report.month}, {span}, team {report.team}, in {report.currency}"]
    else:
        lines = [
            f"Chargeback {report.month}, {span}, in {report.currency}",
            f"Unallocated: {numbers.percent(report.unallocated_share)} "
            f"({money(report.unallocated)} of {money(report.total)}); "
            f"idle: {money(report.idle)} ({money(report.idle_shared)} shared onto teams)",
        ]
    if report.quota_basis is not None:
        lines.append(QUOTA_BASIS[report.quota_basis])
    return lines


def model_text(report: Report, cells: Cells) -> list[list[str]]:
    """The text table's models: its header, the rows and the total."""
    return [[cells.head(c) for c in MODEL_COLUMNS], *model_lines(report, cells)]


def backlog_text(backlog: BacklogTable, span: str, cells: Cells = CSV) -> list[str]:
    """The text table's backlog: each list largest first, each with its total."""
    keys = ", ".join(backlog.keys) or "none configured"
    lines = [f"Labelling backlog, {span}: unallocated and fallback-placed cost by workload", ""]
    lines += [f"Keys that would place an unallocated workload: {keys}", ""]
    rows = backlog_lines(backlog, cells)
    totals = {i for i, row in enumerate(rows) if row[1] == cells.total}
    lines += _aligned(rows, {0} | {i - 1 for i in totals})
    return lines


def queue_text(table: QueueTable, span: str, cells: Cells = CSV) -> list[str]:
    """The text table's queues: per ClusterQueue, then per team (beside the cost, not in it)."""
    lines = [f"Kueue queues, {span}: ceilings and preempted work per ClusterQueue", ""]
    lines += _aligned(queue_lines(table, cells), {0})
    title = "Waiting, borrowing ahead, share of the GPU cost (%) and Kueue's weighted share"
    lines += ["", f"{title} per team", ""]
    lines += _aligned(team_queue_lines(table, cells), {0})
    if table.missing:
        lines += ["", f"Not read: {', '.join(table.missing)} (docs/queues.md)"]
    return lines


def table_lines(
    report: Report, numbers: Numbers | None = None
) -> tuple[list[list[str]], list[list[str]]]:
    """The text table's cells, header first and total row last: teams, then models."""
    cells = people(numbers or Numbers(ENGLISH, report.currency))
    return team_lines(report, cells), model_text(report, cells)

"""The report as a text table for people, and the team and model cells CSV shares with it."""

from __future__ import annotations

from decimal import Decimal

from exporter.finance.report.backlog import BacklogTable, backlog_lines
from exporter.finance.report.figures import QUOTA_BASIS, Report
from exporter.finance.report.gpu_month import gpu_text, serving_of
from exporter.finance.report.teams import USAGE_COLUMNS, usage_cells, usage_total_cells
from exporter.finance.report.units import text_lines, unit_tables
from exporter.finance.report.weights import weight_text

__all__ = [
    "MODEL_COLUMNS",
    "MODEL_NAMES",
    "TOTAL",
    "backlog_text",
    "model_lines",
    "report_table",
    "table_lines",
    "team_lines",
]

TOTAL = "total"
_PER = "declared and measured per weighted token"

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


def team_lines(report: Report, money: str) -> list[list[str]]:
    """Header, team rows and the total row; every printed total is the sum of what is above."""

    def opt(value: Decimal | None) -> str:
        return "" if value is None else format(value, money)

    def budget_total(values: list[Decimal | None]) -> str:
        present = [v for v in values if v is not None]
        return format(sum(present, Decimal(0)), money) if present else ""

    # Budgets are per team: a dimension's rows have none, so its table has no budget columns.
    after = TEAM_COLUMNS_AFTER if report.by == "team" else TEAM_COLUMNS_AFTER[:1]
    lines = [[report.by, *report.components, *after]]
    for row in report.rows:
        cells = [format(row.costs[c], money) for c in report.components]
        budgets = [opt(row.budget_gpu), opt(row.budget_llm)]
        usage = usage_cells(report.usage.get(row.team), money)
        row_cells = [row.team, *cells, format(row.total, money), *budgets, *usage]
        lines.append(row_cells[: len(lines[0])])
    sums = [format(report.columns[c], money) for c in report.components]
    gpu = budget_total([r.budget_gpu for r in report.rows])
    llm = budget_total([r.budget_llm for r in report.rows])
    usage = usage_total_cells((report.usage.get(r.team) for r in report.rows), money)
    lines.append([TOTAL, *sums, format(report.total, money), gpu, llm, *usage][: len(lines[0])])
    return lines


def model_lines(report: Report, money: str, price: str, scale: float = 1.0) -> list[list[str]]:
    def opt(value: float | None) -> str:
        return "" if value is None else format(value * scale, price)

    lines = [
        [
            m.model,
            m.kind,
            format(m.spend, money),
            str(m.prompt_tokens),
            str(m.completion_tokens),
            str(m.requests),
            opt(m.declared),
            opt(m.measured),
            opt(m.recommended_input),
            opt(m.recommended_output),
        ]
        for m in report.models
    ]
    counts = [str(sum(getattr(m, f) for m in report.models)) for f in MODEL_COLUMNS[3:6]]
    lines.append([TOTAL, "", format(report.model_spend, money), *counts, "", "", "", ""])
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


def report_table(report: Report) -> str:
    """The text table: header lines, teams, models, weights, backlog and unit economics."""
    span = "closed month" if report.closed else "month to date"
    teams = team_lines(report, ",.2f")
    lines = [
        f"Chargeback {report.month}, {span}, in {report.currency}",
        f"Unallocated: {report.unallocated_share:.1f} % "
        f"({report.unallocated:,.2f} of {report.total:,.2f}); "
        f"idle: {report.idle:,.2f} ({report.idle_shared:,.2f} shared onto teams)",
    ]
    if report.team is not None:
        lines = [f"Chargeback {report.month}, {span}, team {report.team}, in {report.currency}"]
    if report.quota_basis is not None:
        lines.append(QUOTA_BASIS[report.quota_basis])
    lines += ["", *_aligned(teams, {0, len(teams) - 2})]
    if report.models:
        head = [*MODEL_COLUMNS[:6], "declared", "measured", "rec. input", "rec. output"]
        # People read prices per million tokens (CSV keeps the per-token figures for tools).
        models = [head, *model_lines(report, ",.2f", ",.4f", 1_000_000)]
        lines += ["", f"LLM models, {span} (prices per million tokens; {_PER})", ""]
        lines += _aligned(models, {0, len(models) - 2})
    lines += weight_text(report.weights)
    if report.backlog is not None:
        lines += ["", *backlog_text(report.backlog, span)]
    lines += gpu_text(report.gpu, span)
    if report.units is not None:
        serving = serving_of(report)
        lines += text_lines(
            unit_tables(report.units, report.currency, report.closed, serving=serving)
        )
    return "\n".join(lines) + "\n"


def backlog_text(backlog: BacklogTable, span: str) -> list[str]:
    """The text table's backlog: each list largest first, each with its total."""
    keys = ", ".join(backlog.keys) or "none configured"
    lines = [f"Labelling backlog, {span}: unallocated and fallback-placed cost by workload", ""]
    lines += [f"Keys that would place an unallocated workload: {keys}", ""]
    rows = backlog_lines(backlog, ",.2f")
    totals = {i for i, row in enumerate(rows) if row[1] == TOTAL}
    lines += _aligned(rows, {0} | {i - 1 for i in totals})
    return lines


def table_lines(report: Report) -> tuple[list[list[str]], list[list[str]]]:
    """The text table's cells, header first and total row last: teams, then models."""
    head = [*MODEL_COLUMNS[:6], "declared", "measured", "rec. input", "rec. output"]
    return team_lines(report, ",.2f"), [head, *model_lines(report, ",.2f", ",.4f", 1_000_000)]

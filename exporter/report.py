"""The month-to-date chargeback table for finance: table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from exporter.attribution import IDLE, OTHER, UNALLOCATED
from exporter.chargeback import Ledger
from exporter.llm import ModelPricing, TeamModelUsage
from exporter.metrics import COMPONENTS

__all__ = ["ModelRow", "Report", "build_report", "format_report", "model_rows"]

TOTAL = "total"


@dataclass(frozen=True)
class ModelRow:
    """One LLM model this month: its kind, what LiteLLM charged, tokens, and pricing drift."""

    model: str
    kind: str  # external | self_hosted | undeclared
    spend: float
    prompt_tokens: float
    completion_tokens: float
    declared: float | None = None
    measured: float | None = None
    recommended_input: float | None = None
    recommended_output: float | None = None


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
    models: tuple[ModelRow, ...] = ()

    @property
    def unallocated_share(self) -> float:
        """Unallocated cost as a percentage of the total (0 when nothing was spent)."""
        return 100.0 * self.unallocated / self.total if self.total else 0.0


def _row_order(team: str) -> tuple[int, str]:
    # Teams first by name, then the reserved rows in a fixed order finance can rely on.
    reserved = {OTHER: 1, IDLE: 2, UNALLOCATED: 3}
    return reserved.get(team, 0), team


def build_report(
    ledger: Ledger,
    currency: str,
    month: str,
    budgets: Mapping[tuple[str, str], float],
    models: tuple[ModelRow, ...] = (),
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
        models,
    )


def model_rows(
    usage: Mapping[tuple[str, str], TeamModelUsage],
    pricing: Iterable[ModelPricing],
    kinds: Mapping[str, str],
) -> tuple[ModelRow, ...]:
    """Per-model LLM figures from the join's typed usage and pricing (the samples' own numbers).

    A (team, model) whose spend the proxy did not report adds no spend, as its series is absent.
    """
    spend: dict[str, float] = defaultdict(float)
    prompt: dict[str, float] = defaultdict(float)
    completion: dict[str, float] = defaultdict(float)
    for (_, model), use in sorted(usage.items()):
        spend[model] += use.spend or 0.0
        prompt[model] += use.prompt_tokens
        completion[model] += use.completion_tokens
    priced = {p.model: p for p in pricing}
    rows = []
    for model in sorted(spend):
        p = priced.get(model)
        rows.append(
            ModelRow(
                model,
                kinds.get(model, "undeclared"),
                spend[model],
                prompt[model],
                completion[model],
                p.declared if p else None,
                p.measured if p else None,
                p.recommended_input if p else None,
                p.recommended_output if p else None,
            )
        )
    return tuple(rows)


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
        "models": [asdict(m) for m in report.models],
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
    if report.models:
        writer.writerow([])
        writer.writerow(MODEL_COLUMNS)
        for m in report.models:
            writer.writerow(_model_cells(m, ".2f", ".3e"))
    return out.getvalue()


MODEL_COLUMNS = [
    "model",
    "kind",
    "spend",
    "prompt_tokens",
    "completion_tokens",
    "declared_per_token",
    "measured_per_token",
    "recommended_input_cost_per_token",
    "recommended_output_cost_per_token",
]


def _model_cells(m: ModelRow, money: str, price: str) -> list[str]:
    def opt(value: float | None) -> str:
        return "" if value is None else format(value, price)

    return [
        m.model,
        m.kind,
        format(m.spend, money),
        f"{m.prompt_tokens:.0f}",
        f"{m.completion_tokens:.0f}",
        opt(m.declared),
        opt(m.measured),
        opt(m.recommended_input),
        opt(m.recommended_output),
    ]


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


def _table(report: Report) -> str:
    header = ["team", *report.components, TOTAL, "budget"]
    body = []
    for team, costs, total, budget in report.rows:
        cells = [f"{costs.get(c, 0.0):,.2f}" for c in report.components]
        body.append([team, *cells, f"{total:,.2f}", "" if budget is None else f"{budget:,.2f}"])
    sums = [f"{sum(r[1].get(c, 0.0) for r in report.rows):,.2f}" for c in report.components]
    total_row = [TOTAL, *sums, f"{report.total:,.2f}", ""]
    lines = [
        f"Chargeback {report.month}, month to date, in {report.currency}",
        f"Unallocated: {report.unallocated_share:.1f} % "
        f"({report.unallocated:,.2f} of {report.total:,.2f}); idle: {report.idle:,.2f}",
        "",
        *_aligned([header, *body, total_row], {0, len(body)}),
    ]
    if report.models:
        rows = [[*MODEL_COLUMNS[:5], "declared", "measured", "rec. input", "rec. output"]]
        rows += [_model_cells(m, ",.2f", ".3e") for m in report.models]
        lines += ["", "LLM models, month to date (cost per token in the currency above)", ""]
        lines += _aligned(rows, {0})
    return "\n".join(lines) + "\n"

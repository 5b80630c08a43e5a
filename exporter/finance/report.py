"""The month's chargeback table for finance, rounded so it foots: table, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from exporter.exposition.catalogue import COMPONENTS
from exporter.finance.backlog_table import BacklogTable, backlog_json, backlog_lines
from exporter.finance.footing import cents, foot, largest_remainder, round_cents
from exporter.finance.team_table import (
    USAGE_COLUMNS,
    TeamUsage,
    usage_cells,
    usage_json,
    usage_total_cells,
)
from exporter.finance.unit_tables import text_lines, unit_json, unit_tables
from exporter.finance.weight_table import weight_json, weight_text
from exporter.ledger.attribution import IDLE, OTHER, UNALLOCATED
from exporter.ledger.chargeback import Ledger
from exporter.ledger.llm import ModelPricing, TeamModelUsage
from exporter.ledger.unit_join import UnitEconomics
from exporter.ledger.weights import CompletionWeight

__all__ = [
    "KUEUE_NOW",
    "PROMETHEUS",
    "QUOTA_BASIS",
    "ModelRow",
    "Report",
    "TeamRow",
    "build_report",
    "format_report",
    "model_rows",
    "table_lines",
]

TOTAL = "total"
# A closed month's quota figures rest on Kueue's quotas when the report runs: Kueue keeps no
# history. Said without the instant, so a closed month prints the same bytes whenever it runs.
KUEUE_NOW = "kueue_now"
# With report.prometheus: the month's time-weighted average of the exporter's own quota series.
PROMETHEUS = "prometheus"
QUOTA_BASIS = {
    KUEUE_NOW: "Quota figures rest on Kueue's nominal quotas and lending limits as they are "
    "when the report runs (Kueue keeps no history); borrowing is measured from the month's "
    "GPU-hours",
    PROMETHEUS: "Quota figures rest on the month's time-weighted average of the nominal quotas "
    "and lending limits the exporter published, read back from Prometheus; borrowing is "
    "measured from the month's GPU-hours",
}
TABLES = ("teams", "models", "backlog")
_CENT = Decimal("0.01")
_PER = "declared and measured per weighted token"


@dataclass(frozen=True)
class TeamRow:
    """One team's printed costs per component, its total, and its GPU and LLM budgets."""

    team: str
    costs: Mapping[str, Decimal]
    total: Decimal
    budget_gpu: Decimal | None = None
    budget_llm: Decimal | None = None


@dataclass(frozen=True)
class ModelRow:
    """One LLM model this month: its kind, what LiteLLM charged, counts, and pricing drift."""

    model: str
    kind: str  # external | self_hosted | undeclared
    spend: Decimal
    prompt_tokens: int
    completion_tokens: int
    requests: int
    declared: float | None = None
    measured: float | None = None
    recommended_input: float | None = None
    recommended_output: float | None = None


@dataclass(frozen=True)
class Report:
    """Printed figures that foot: team rows, component totals, the grand total, idle, models."""

    currency: str
    month: str  # YYYY-MM in the configured time zone
    components: tuple[str, ...]
    rows: tuple[TeamRow, ...]
    columns: Mapping[str, Decimal]
    total: Decimal
    idle: Decimal  # the month's idle cost, whatever the policy
    idle_shared: Decimal  # the part of it the policy put on teams (the rest is `__idle__`)
    models: tuple[ModelRow, ...] = ()
    closed: bool = False  # a closed past month rather than the month to date
    quota_basis: str | None = None  # what a closed month's quota figures rest on (KUEUE_NOW)
    usage: Mapping[str, TeamUsage] = field(default_factory=dict)  # operating figures per team
    backlog: BacklogTable | None = None  # the labelling backlog (finance.operations)
    team: str | None = None  # the one team a team's report is about
    units: UnitEconomics | None = None  # unit economics (exporter.finance.unit_tables)
    by: str = "team"  # what a row is: a team, or a value of the dimension of this name
    weights: tuple[CompletionWeight, ...] = ()  # per self-hosted model (finance.weight_table)

    @property
    def unallocated(self) -> Decimal:
        """The printed total of `__unallocated__`."""
        return next((r.total for r in self.rows if r.team == UNALLOCATED), Decimal(0))

    @property
    def unallocated_share(self) -> float:
        """Unallocated cost as a percentage of the total (0 when nothing was spent)."""
        return float(100 * self.unallocated / self.total) if self.total else 0.0

    @property
    def model_spend(self) -> Decimal:
        """The printed total of the models' spend."""
        return sum((m.spend for m in self.models), Decimal(0))


def _row_order(team: str) -> tuple[int, str]:
    # Teams first by name, then the reserved rows in a fixed order finance can rely on.
    reserved = {OTHER: 1, IDLE: 2, UNALLOCATED: 3}
    return reserved.get(team, 0), team


def _money(value: int | Decimal) -> Decimal:
    return (Decimal(value) / 100).quantize(_CENT)


def _budget(budgets: Mapping[tuple[str, str], float], team: str, kind: str) -> Decimal | None:
    amount = budgets.get((team, kind))
    return None if amount is None else _money(round_cents(cents(amount)))


def build_report(
    ledger: Ledger,
    currency: str,
    month: str,
    budgets: Mapping[tuple[str, str], float],
    models: tuple[ModelRow, ...] = (),
    *,
    idle: float | None = None,
    closed: bool = False,
    quota_basis: str | None = None,
    units: UnitEconomics | None = None,
    by: str = "team",
) -> Report:
    """Round a month's ledger so it foots; `__idle__` and `__unallocated__` always show.

    Args:
        budgets: monthly budgets keyed (team, kind), kind `gpu` or `llm`.
        idle: the month's idle cost as OpenCost reported it; without it, the `__idle__` row
            plus the `idle_share` component (which misses GPU idle a quota charge absorbed).
    """
    by_team = ledger.by_team()
    for reserved in (IDLE, UNALLOCATED):
        by_team.setdefault(reserved, {})
    used = {c for costs in by_team.values() for c in costs}
    components = tuple(c for c in COMPONENTS if c in used)
    teams = sorted(by_team, key=_row_order)
    footed = foot([[cents(by_team[t].get(c, 0.0)) for c in components] for t in teams])
    rows = tuple(
        TeamRow(
            team,
            {c: _money(v) for c, v in zip(components, footed.cells[i], strict=True)},
            _money(footed.rows[i]),
            _budget(budgets, team, "gpu"),
            _budget(budgets, team, "llm"),
        )
        for i, team in enumerate(teams)
    )
    columns = {c: _money(v) for c, v in zip(components, footed.columns, strict=True)}
    idle_row = next(r.total for r in rows if r.team == IDLE)
    idle_shared = _shared_idle(ledger, idle, by_team[IDLE], columns.get("idle_share"))
    return Report(
        currency,
        month,
        components,
        rows,
        columns,
        _money(footed.total),
        idle_row + idle_shared,
        idle_shared,
        models,
        closed,
        quota_basis,
        units=units,
        by=by,
    )


def _shared_idle(
    ledger: Ledger, idle: float | None, idle_row: Mapping[str, float], share: Decimal | None
) -> Decimal:
    """The idle the policy put on teams, in printed figures: the printed `idle_share` column,
    plus what a quota charge absorbed (idle neither on `__idle__` nor in `idle_share`), rounded.

    So the header's idle is the printed `__idle__` row plus that, and foots with the table.
    The absorbed part is what the sums leave over, so this holds under every policy without
    asking which one is in force (only a rule that charges GPU quota, `reservation`, absorbs).
    """
    shared = share or Decimal(0)
    if idle is None:
        return shared
    exact = ledger_component(ledger, "idle_share")
    absorbed = cents(idle) - cents(sum(idle_row.values())) - cents(exact)
    return shared + _money(round_cents(absorbed))


def ledger_component(ledger: Ledger, component: str) -> float:
    """One component summed over every team."""
    return sum(v for (_, c), v in sorted(ledger.costs.items()) if c == component)


def model_rows(
    usage: Mapping[tuple[str, str], TeamModelUsage],
    pricing: Iterable[ModelPricing],
    kinds: Mapping[str, str],
) -> tuple[ModelRow, ...]:
    """Per-model LLM figures from the join's typed usage and pricing (the samples' own numbers).

    A (team, model) whose spend the proxy did not report adds no spend, as its series is absent.
    Spend is rounded by largest remainder, so the models' printed spend adds to its total.
    """
    spend: dict[str, Decimal] = defaultdict(Decimal)
    counts: dict[str, tuple[int, int, int]] = defaultdict(lambda: (0, 0, 0))
    for (_, model), use in sorted(usage.items()):
        spend[model] += cents(use.spend or 0.0)
        prompt, completion, requests = counts[model]
        counts[model] = (
            prompt + use.prompt_tokens,
            completion + use.completion_tokens,
            requests + use.requests,
        )
    names = sorted(spend)
    total = round_cents(sum(spend.values(), Decimal(0)))
    printed = largest_remainder([spend[m] for m in names], total)
    priced = {p.model: p for p in pricing}
    rows = []
    for model, amount in zip(names, printed, strict=True):
        p = priced.get(model)
        rows.append(
            ModelRow(
                model,
                kinds.get(model, "undeclared"),
                _money(amount),
                counts[model][0],
                counts[model][1],
                counts[model][2],
                p.declared if p else None,
                p.measured if p else None,
                p.recommended_input if p else None,
                p.recommended_output if p else None,
            )
        )
    return tuple(rows)


def format_report(report: Report, fmt: str, table: str = "teams") -> str:
    """Render the report as `table`, `csv` (one table: `teams` or `models`) or `json`."""
    if fmt == "json":
        return _json(report)
    if fmt == "csv":
        return _csv(report, table)
    return _table(report)


def _opt(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def _json(report: Report) -> str:
    payload: dict[str, Any] = {
        "currency": report.currency,
        "month": report.month,
        "closed": report.closed,
        **({"team": report.team} if report.team is not None else {}),
        "unallocated_share_percent": round(report.unallocated_share, 4),
        "total": float(report.total),
        "idle": {"total": float(report.idle), "shared_onto_teams": float(report.idle_shared)},
        "components": {c: float(v) for c, v in report.columns.items()},
        "teams": [
            {
                "team": row.team,
                "components": {c: float(v) for c, v in row.costs.items()},
                "total": float(row.total),
                "budget_gpu": _opt(row.budget_gpu),
                "budget_llm": _opt(row.budget_llm),
                **usage_json(report.usage.get(row.team)),
            }
            for row in report.rows
        ],
        "models": [
            {
                "model": m.model,
                "kind": m.kind,
                "spend": float(m.spend),
                "prompt_tokens": m.prompt_tokens,
                "completion_tokens": m.completion_tokens,
                "requests": m.requests,
                "declared": m.declared,
                "measured": m.measured,
                "recommended_input": m.recommended_input,
                "recommended_output": m.recommended_output,
            }
            for m in report.models
        ],
        "models_spend": float(report.model_spend),
        "llm_completion_weights": weight_json(report.weights),
    }
    if report.quota_basis is not None:
        payload["quota_basis"] = report.quota_basis
    if report.backlog is not None:
        payload["backlog"] = backlog_json(report.backlog)
    if report.units is not None:
        payload["unit_economics"] = unit_json(report.units, report.closed)
    if report.by != "team":
        # Rows are a dimension's values: named so, with no budgets (budgets are per team).
        payload["by"] = report.by
        payload["values"] = [
            {"value": t.pop("team"), "components": t["components"], "total": t["total"]}
            for t in payload.pop("teams")
        ]
    return json.dumps(payload, indent=2) + "\n"


TEAM_COLUMNS_AFTER = [TOTAL, "budget_gpu", "budget_llm", *USAGE_COLUMNS]
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


def _team_lines(report: Report, money: str) -> list[list[str]]:
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


def _model_lines(report: Report, money: str, price: str, scale: float = 1.0) -> list[list[str]]:
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


def _csv(report: Report, table: str) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if table == "models":
        writer.writerow([*MODEL_COLUMNS, "currency"])
        rows = _model_lines(report, ".2f", ".3e")
    elif table == "backlog":
        head, *rows = backlog_lines(report.backlog or BacklogTable(()), ".2f")
        writer.writerow([*head, "currency"])
    else:
        head, *rows = _team_lines(report, ".2f")
        writer.writerow([*head, "currency"])
    for row in rows:
        writer.writerow([*row, report.currency])
    return out.getvalue()


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
    span = "closed month" if report.closed else "month to date"
    teams = _team_lines(report, ",.2f")
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
        models = [head, *_model_lines(report, ",.2f", ",.4f", 1_000_000)]
        lines += ["", f"LLM models, {span} (prices per million tokens; {_PER})", ""]
        lines += _aligned(models, {0, len(models) - 2})
    lines += weight_text(report.weights)
    if report.backlog is not None:
        lines += ["", *backlog_text(report.backlog, span)]
    if report.units is not None:
        lines += text_lines(unit_tables(report.units, report.currency, report.closed))
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
    return _team_lines(report, ",.2f"), [head, *_model_lines(report, ",.2f", ",.4f", 1_000_000)]

"""The report in the format asked for: the text table, CSV (one table) or JSON."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from exporter.finance.report.backlog import (
    BACKLOG_NAMES,
    BacklogTable,
    backlog_json,
    backlog_lines,
)
from exporter.finance.report.cells import csv_text
from exporter.finance.report.figures import Report
from exporter.finance.report.gpu_month import gpu_json, serving_of
from exporter.finance.report.teams import usage_json
from exporter.finance.report.text import (
    MODEL_COLUMNS,
    MODEL_NAMES,
    model_lines,
    report_table,
    team_lines,
)
from exporter.finance.report.units import unit_json
from exporter.finance.report.weights import weight_json

__all__ = ["format_report"]


def format_report(report: Report, fmt: str, table: str = "teams") -> str:
    """Render the report as `table`, `csv` (one table: `teams` or `models`) or `json`."""
    if fmt == "json":
        return _json(report)
    if fmt == "csv":
        return _csv(report, table)
    return report_table(report)


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
    gpu = gpu_json(report.gpu)
    if gpu is not None:
        payload["gpu_operation"] = gpu
    if report.units is not None:
        payload["unit_economics"] = unit_json(report.units, report.closed, serving_of(report))
    if report.by != "team":
        # Rows are a dimension's values: named so, with no budgets (budgets are per team).
        payload["by"] = report.by
        payload["values"] = [
            {"value": t.pop("team"), "components": t["components"], "total": t["total"]}
            for t in payload.pop("teams")
        ]
    return json.dumps(payload, indent=2) + "\n"


def _csv(report: Report, table: str) -> str:
    if table == "models":
        head, rows = [*MODEL_COLUMNS], model_lines(report, ".2f", ".3e")
        names = MODEL_NAMES
    elif table == "backlog":
        head, *rows = backlog_lines(report.backlog or BacklogTable(()), ".2f")
        names = BACKLOG_NAMES
    else:
        head, *rows = team_lines(report, ".2f")
        names = frozenset({0})  # the team (or dimension value); every other cell is a figure
    # Names come from labels, upstreams and the config: none may become a spreadsheet formula.
    # The currency (config) is the last cell of every row.
    lines = [[*row, report.currency] for row in rows]
    return csv_text([*head, "currency"], lines, sorted({*names, len(head)}))

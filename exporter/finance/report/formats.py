"""The report in the format asked for: the text table, CSV (one table, any of them) or JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from exporter.finance.report.advice import (
    ADVICE_NAMES,
    advice_json,
    advice_lines,
    withheld_lines,
)
from exporter.finance.report.backlog import (
    BACKLOG_NAMES,
    BacklogTable,
    backlog_json,
    backlog_lines,
)
from exporter.finance.report.cells import csv_text
from exporter.finance.report.figures import Report
from exporter.finance.report.forecast import forecast_json, forecast_lines
from exporter.finance.report.gpu_month import gpu_json, serving_of
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.queues import (
    QueueTable,
    queue_json,
    queue_lines,
    team_queue_lines,
)
from exporter.finance.report.reconciliation import (
    ReconciliationTable,
    reconciliation_json,
    reconciliation_lines,
)
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
from exporter.ledger.advice import AdviceSet
from exporter.ledger.units.economics import UnitEconomics

__all__ = ["UNIT_TABLES", "format_report", "json_table"]

# The unit-economics tables CSV writes (`--table NAME`), each the JSON report's list of that
# name (build_or_buy_*: its `teams` and `models`), with the JSON's keys as its columns.
UNIT_TABLES: Mapping[str, tuple[str, ...]] = {
    "gpu_prices": ("kind", "name", "price_per_gpu_hour", "source", "opencost_price_per_gpu_hour"),
    "gpu_price_builds": (
        *("kind", "name", "gpus_per_node", "watts_per_gpu", "power", "capex_per_node_hour"),
        *("energy_per_node_hour", "operations_per_node_hour", "node_per_hour"),
        "price_per_gpu_hour",
    ),
    "gpu_energy_now": ("team", "watts", "kwh_per_hour", "cost_per_hour", "co2e_grams_per_hour"),
    "llm_models": (
        *("model", "kind", "tokens", "requests", "declared_per_million_tokens"),
        *("measured_per_million_tokens", "measured_per_request"),
    ),
    "llm_teams": (
        *("team", "model", "kind", "tokens", "requests", "cost", "per_million_tokens"),
        "per_request",
    ),
    "build_or_buy_teams": ("team", "model", "self_hosted", "alternative"),
    "build_or_buy_models": (
        *("model", "alternative", "self_hosted", "alternative_cost", "utilisation"),
        *("break_even_ratio", "break_even_utilisation"),
    ),
    "llm_completion_weights": (
        *("model", "asked", "basis", "fallback_reason", "configured", "measured", "applied"),
        *("prefill_ms_per_prompt_token", "decode_ms_per_completion_token", "requests_measured"),
    ),
}


def format_report(
    report: Report, fmt: str, table: str = "teams", numbers: Numbers | None = None
) -> str:
    """Render the report as `table` (in `numbers`' locale), `csv` (one table) or `json`."""
    if fmt == "json":
        return _json(report)
    if fmt == "csv":
        return _csv(report, table)
    return report_table(report, numbers)


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
    forecast = forecast_json(report)
    if forecast is not None:
        payload["forecast"] = forecast
    if report.queues is not None:
        payload["queues"] = queue_json(report.queues)
    gpu = gpu_json(report.gpu)
    if gpu is not None:
        payload["gpu_operation"] = gpu
    if report.advice is not None:
        payload["advice"] = advice_json(report.advice)
    if report.units is not None:
        payload["unit_economics"] = unit_json(report.units, report.closed, serving_of(report))
    if report.reconciliation is not None:
        payload["reconciliation"] = reconciliation_json(report.reconciliation)
    if report.by != "team":
        # Rows are a dimension's values: named so, with no budgets (budgets are per team).
        payload["by"] = report.by
        payload["values"] = [
            {"value": t.pop("team"), "components": t["components"], "total": t["total"]}
            for t in payload.pop("teams")
        ]
    return json.dumps(payload, indent=2) + "\n"


def _csv(report: Report, table: str) -> str:
    if table in UNIT_TABLES:
        return _unit_csv(report, table)
    if table == "models":
        head, rows = [*MODEL_COLUMNS], model_lines(report)
        names = MODEL_NAMES
    elif table in ("advice", "advice_withheld"):
        advice = report.advice or AdviceSet(0.0)
        lines = advice_lines(advice) if table == "advice" else withheld_lines(advice)
        head, rows = lines[0], lines[1:]
        names = ADVICE_NAMES if table == "advice" else frozenset({0, 1, 2, 3})
    elif table == "forecast":
        # A closed month has none: the header alone says the table is empty, not unknown.
        head, *rows = forecast_lines(report) or [
            [report.by, "forecast_low", "forecast_mid", "forecast_high"]
        ]
        names = frozenset({0})
    elif table == "reconciliation":
        nothing = ReconciliationTable((), (), (), Decimal(0), 0)
        head, *rows = reconciliation_lines(report.reconciliation or nothing)
        names = frozenset(range(6)) | {13}  # names and words; the rest are figures
    elif table == "backlog":
        head, *rows = backlog_lines(report.backlog or BacklogTable(()))
        names = BACKLOG_NAMES
    elif table in ("queues", "queue_teams"):
        no_queues = QueueTable((), ())
        lines_of = queue_lines if table == "queues" else team_queue_lines
        head, *rows = lines_of(report.queues or no_queues)
        names = frozenset({0, 1}) if table == "queues" else frozenset({0})
    else:
        head, *rows = team_lines(report)
        names = frozenset({0})  # the team (or dimension value); every other cell is a figure
    # Names come from labels, upstreams and the config: none may become a spreadsheet formula.
    # The currency (config) is the last cell of every row.
    lines = [[*row, report.currency] for row in rows]
    return csv_text([*head, "currency"], lines, sorted({*names, len(head)}))


def json_table(report: Report, table: str) -> list[dict[str, Any]]:
    """One unit-economics table's rows as the JSON report carries them (none: an empty list)."""
    if table == "llm_completion_weights":
        return weight_json(report.weights)
    units = unit_json(report.units or UnitEconomics(), report.closed)
    if table.startswith("build_or_buy_"):
        rows: list[dict[str, Any]] = units["build_or_buy"][table.removeprefix("build_or_buy_")]
        return rows
    found: list[dict[str, Any]] = units[table]
    return found


def _unit_csv(report: Report, table: str) -> str:
    """A unit-economics table as CSV: the JSON's keys as the header, its figures as the cells."""
    head = UNIT_TABLES[table]
    rows = json_table(report, table)
    cells = [[_cell(row[k]) for k in head] for row in rows]
    # Every text cell is a name (a team, a model, a source): none may become a formula.
    names = sorted({i for row in rows for i, k in enumerate(head) if isinstance(row[k], str)})
    lines = [[*row, report.currency] for row in cells]
    return csv_text([*head, "currency"], lines, [*names, len(head)])


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return " ".join(str(v) for v in value)
    if isinstance(value, Mapping):
        return json.dumps(value, sort_keys=True)
    return str(value)

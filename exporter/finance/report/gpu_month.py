"""The period's GPU operation per team: idle GPU-hours, utilisation, energy and CO2e.

Where each figure comes from, first that has it:

- the month to date with DCGM through Prometheus: the join's own (idle GPU-hours);
- `report.prometheus`: the exporter's own series over the period (exporter.sources.gpu_history),
  for a closed month and for DCGM read directly, which keeps no history;
- none: the report says so in words, naming what would give it, never a blank.

A closed month's energy and build-or-buy utilisation are then the month's, not the draw of the
day the report runs (exporter.finance.report.units strips those).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from exporter.finance.report.figure_formats import TEXT, Format, Formats
from exporter.finance.report.figures import GpuOperation, Report
from exporter.finance.report.teams import TeamUsage
from exporter.finance.report.text_tables import UnitTable, text_lines
from exporter.sources.gpu_history_records import GpuMonth

__all__ = [
    "DCGM_HISTORY",
    "GPU_PROMETHEUS",
    "NO_DCGM",
    "NO_HISTORY",
    "UNREADABLE",
    "GpuOperation",
    "gpu_json",
    "gpu_table",
    "gpu_text",
    "gpu_words",
    "serving_of",
    "with_gpu_month",
]

# Where the period's GPU operation comes from, or why it is not known, in words.
DCGM_HISTORY = "DCGM through Prometheus"
GPU_PROMETHEUS = "the exporter's own series in report.prometheus"
NO_DCGM = "not known: no DCGM source is configured"
NO_HISTORY = (
    "not known: DCGM read directly keeps no history; set sources.dcgm.prometheus or "
    "report.prometheus to have it"
)
UNREADABLE = "not known: report.prometheus could not be read"


def with_gpu_month(report: Report, month: GpuMonth | None, basis: str) -> Report:
    """The report with the period's GPU operation, and its idle GPU-hours in the team table
    where the join had none (DCGM read directly, or a closed month)."""
    usage = dict(report.usage)
    if month is not None:
        for t in month.teams:
            known = usage.get(t.team, TeamUsage())
            if t.idle_gpu_hours is not None and known.idle_gpu_hours is None:
                usage[t.team] = replace(known, idle_gpu_hours=t.idle_gpu_hours)
    return replace(report, usage=usage, gpu=GpuOperation(basis, month))


def serving_of(report: Report) -> Mapping[str, float] | None:
    """Each self-hosted model's serving utilisation over the period, where history gives it."""
    month = report.gpu.month if report.gpu is not None else None
    return month.serving_utilisation if month is not None else None


def gpu_words(operation: GpuOperation, span: str) -> str | None:
    """What is not known of the period's GPU operation and why, or None when a table says it."""
    month = operation.month
    if month is not None and month.teams:
        return None
    why = operation.basis if month is None else "not known: no series in the period"
    return f"GPU operation, {span}: idle GPU-hours, utilisation, energy and CO2e {why}"


def gpu_table(
    operation: GpuOperation, span: str, f: Formats = TEXT, team: str | None = None
) -> UnitTable | None:
    """Each team's (or one team's) GPU operation as a table, None when nothing is known."""
    month = operation.month
    if month is None:
        return None
    rows = tuple(
        (
            f.team(t.team),
            _known(f.plain, t.idle_gpu_hours),
            _known(f.ratio, t.utilisation),
            _known(f.plain, t.kwh),
            _known(f.plain, None if t.co2e_grams is None else t.co2e_grams / 1000),
        )
        for t in month.teams
        if team is None or t.team == team
    )
    if not rows:
        return None
    head = ("team", "idle GPU-hours", "utilisation", "energy kWh", "CO2e kg")
    return UnitTable(
        "gpu_operation", f"GPU operation, {span} (from {operation.basis})", head, rows, 1
    )


def gpu_text(operation: GpuOperation | None, span: str, f: Formats = TEXT) -> list[str]:
    """The text report's lines: a table per team, or what is not known and why."""
    if operation is None:
        return []
    words = gpu_words(operation, span)
    table = gpu_table(operation, span, f)
    if words is not None or table is None:
        return ["", words or ""]
    return text_lines([table])


def _known(fmt: Format, value: float | None) -> str:
    # An unknown figure is said in words, not left blank.
    return "not known" if value is None else fmt(value)


def gpu_json(operation: GpuOperation | None) -> dict[str, Any] | None:
    """The JSON report's `gpu_operation`: its basis, and each team's figures (null: unknown)."""
    if operation is None:
        return None
    teams = operation.month.teams if operation.month is not None else ()
    return {
        "basis": operation.basis,
        "teams": [
            {
                "team": t.team,
                "idle_gpu_hours": _r(t.idle_gpu_hours),
                "utilisation": _r(t.utilisation),
                "energy_kwh": _r(t.kwh),
                "co2e_grams": _r(t.co2e_grams),
            }
            for t in teams
        ],
    }


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)

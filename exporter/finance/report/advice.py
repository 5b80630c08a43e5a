"""The report's `advice` tables: each advice with its evidence and surety, and the withheld."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from typing import Any

from exporter.finance.report.writing import CSV, Cells
from exporter.ledger.advice import Advice, AdviceSet
from exporter.sources.dcgm_history.records import Spread

__all__ = [
    "ADVICE_COLUMNS",
    "ADVICE_NAMES",
    "WITHHELD_COLUMNS",
    "advice_json",
    "advice_lines",
    "advice_of_team",
    "advice_text",
    "withheld_lines",
]

ADVICE_COLUMNS = [
    *("team", "kind", "workload", "action", "saving_per_month", "gpus"),
    *("framebuffer_p95_mib", "framebuffer_max_mib", "activity_p95_percent"),
    *("activity_max_percent", "idle_percent", "samples", "coverage_percent"),
]
ADVICE_NAMES = frozenset(range(4))  # team, kind, workload, action: names, never figures
WITHHELD_COLUMNS = ["team", "workload", "reason", "detail"]


def advice_of_team(advice: AdviceSet, team: str) -> AdviceSet:
    """One team's advice and withheld."""
    return replace(
        advice,
        advice=tuple(a for a in advice.advice if a.team == team),
        withheld=tuple(w for w in advice.withheld if w.team == team),
    )


def _cents(value: float) -> Decimal:
    return Decimal(format(value, ".2f"))


def _mib(spread: Spread | None, stat: str) -> str:
    return "" if spread is None else str(round(getattr(spread, stat)))


def _pct(value: float | None) -> str:
    return "" if value is None else format(100 * value, ".1f")


def _activity(item: Advice, stat: str) -> str:
    # A queue's "activity" is its GPUs in use, not a share: the table leaves it out.
    if item.kind == "quota" or item.activity is None:
        return ""
    return _pct(getattr(item.activity, stat))


def advice_lines(advice: AdviceSet, cells: Cells = CSV) -> list[list[str]]:
    """The header, then one row per advice, largest saving of each team first."""
    rows = [[cells.head(c) for c in ADVICE_COLUMNS]]
    for a in advice.advice:
        rows.append(
            [
                cells.name("team", a.team), a.kind, a.workload, a.action,
                cells.money(_cents(a.saving)), format(a.gpus, ".3g"),
                _mib(a.framebuffer, "p95"), _mib(a.framebuffer, "max"),
                _activity(a, "p95"), _activity(a, "max"), _pct(a.idle_share),
                cells.count(a.samples), _pct(a.coverage),
            ]
        )  # fmt: skip
    return rows


def withheld_lines(advice: AdviceSet, cells: Cells = CSV) -> list[list[str]]:
    """The header, then each workload or queue given no advice, with the reason."""
    rows = [[cells.head(c) for c in WITHHELD_COLUMNS]]
    rows += [[cells.name("team", w.team), w.workload, w.reason, w.detail] for w in advice.withheld]
    return rows


Aligned = Callable[[list[list[str]], set[int]], list[str]]


def advice_text(advice: AdviceSet, cells: Cells, aligned: Aligned) -> list[str]:
    """The text table's advice section: the advice, then what was withheld and why."""
    days = advice.window_seconds / 86_400
    lines = [
        "",
        f"Right-sizing advice over the last {days:g} days, a month at the applied GPU price "
        "(mig and idle on one workload are alternatives; nothing is changed)",
        "",
    ]
    if advice.advice:
        lines += aligned(advice_lines(advice, cells), {0})
    else:
        lines.append("No advice: every GPU and queue is used as sized.")
    if advice.withheld:
        lines += ["", "No advice, history too thin or bad:", ""]
        lines += aligned(withheld_lines(advice, cells), {0})
    return lines


def advice_json(advice: AdviceSet) -> dict[str, Any]:
    """The JSON report's `advice`: the window, every advice with its evidence, the withheld."""

    def spread(s: Spread | None) -> dict[str, float] | None:
        if s is None:
            return None
        return {"p50": s.p50, "p95": s.p95, "max": s.max, "samples": s.samples}

    return {
        "window_days": advice.window_seconds / 86_400,
        "advice": [
            {
                "team": a.team,
                "kind": a.kind,
                "workload": a.workload,
                "action": a.action,
                "saving_per_month": float(_cents(a.saving)),
                "gpus": a.gpus,
                "price_per_gpu_hour": a.price,
                "framebuffer_mib": spread(a.framebuffer),
                ("gpus_in_use" if a.kind == "quota" else "activity"): spread(a.activity),
                "idle_share": a.idle_share,
                "samples": a.samples,
                "coverage": a.coverage,
            }
            for a in advice.advice
        ],
        "withheld": [
            {"team": w.team, "workload": w.workload, "reason": w.reason, "detail": w.detail}
            for w in advice.withheld
        ],
    }

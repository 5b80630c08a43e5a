"""The report's queue tables (docs/queues.md): per ClusterQueue, and per team beside its cost.

Per ClusterQueue: its GPUs (nominal, ceiling), what its nominal quota and its ceiling cost for
the month, and the work Kueue threw away in it. Per team: GPU-hours waited (a time, not
money), workloads pending, next month's borrowing and the team's share of the GPU cost. None
of these add to the bill: preempted work is part of it, the rest stands beside it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from exporter.finance.report.teams import Measure
from exporter.finance.report.writing import CSV, Cells
from exporter.ledger.queues.figures import QueueFigures

__all__ = [
    "QUEUE_COLUMNS",
    "TEAM_QUEUE_COLUMNS",
    "QueueLine",
    "QueueTable",
    "TeamQueueLine",
    "queue_json",
    "queue_lines",
    "queue_table",
    "queues_of_team",
    "team_queue_lines",
]

QUEUE_COLUMNS = [
    "team",
    "cluster_queue",
    "nominal_gpus",
    "ceiling_gpus",
    "nominal_cost",
    "ceiling_cost",
    "preempted_cost",
    "preempted_gpu_hours",
]
TEAM_QUEUE_COLUMNS = [
    "team",
    "waiting_gpu_hours",
    "pending_workloads",
    "borrowing_next_month",
    "gpu_cost_share",
    "wait_p90_seconds",
    "weighted_share",
]
_CENT = Decimal("0.01")
AMOUNT, COUNT, PERCENT = Measure.AMOUNT, Measure.COUNT, Measure.PERCENT


@dataclass(frozen=True)
class QueueLine:
    """One ClusterQueue: its GPUs, its month's nominal cost and ceiling, its preempted work."""

    team: str
    cluster_queue: str
    nominal_gpus: float
    ceiling_gpus: float
    nominal_cost: Decimal
    ceiling_cost: Decimal
    preempted_cost: Decimal
    preempted_gpu_hours: float


@dataclass(frozen=True)
class TeamQueueLine:
    """One team's waiting, borrowing ahead and share of the GPU cost."""

    team: str
    waiting_gpu_hours: float | None  # None without Workloads
    pending_workloads: float | None
    borrowing_next_month: Decimal | None
    gpu_cost_share: float | None
    wait_p90_seconds: float | None = None  # from Kueue's metrics; None without them
    weighted_share: float | None = None  # Kueue's, the highest of the team's queues


@dataclass(frozen=True)
class QueueTable:
    """Both queue tables, and the parts that were not read."""

    queues: tuple[QueueLine, ...]
    teams: tuple[TeamQueueLine, ...]
    missing: tuple[str, ...] = ()


def queue_table(figures: QueueFigures, fold: Callable[[str], str]) -> QueueTable:
    """The printed queue tables, teams named as the ledger counts them."""
    preempted: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    if figures.preemption is not None:
        for w in figures.preemption.work:
            acc = preempted[(fold(w.team), w.cluster_queue)]
            acc[0] += w.cost
            acc[1] += w.gpu_hours
    queues = []
    for c in figures.ceilings:
        cost, hours = preempted.pop((fold(c.team), c.cluster_queue), [0.0, 0.0])
        queues.append(
            QueueLine(
                fold(c.team),
                c.cluster_queue,
                c.nominal_gpus,
                c.ceiling_gpus,
                _cents(c.nominal_cost),
                _cents(c.ceiling_cost),
                _cents(cost),
                hours,
            )
        )
    # Work preempted in a queue that no longer holds GPU quota still shows.
    for (team, queue), (cost, hours) in sorted(preempted.items()):
        queues.append(QueueLine(team, queue, 0.0, 0.0, Decimal(0), Decimal(0), _cents(cost), hours))
    return QueueTable(tuple(queues), _team_lines(figures, fold), figures.missing)


def _team_lines(figures: QueueFigures, fold: Callable[[str], str]) -> tuple[TeamQueueLine, ...]:
    waiting = {fold(w.team): w for w in figures.waiting}
    ahead = {fold(b.team): b.cost for b in figures.borrowing}
    shares = {fold(s.team): s.cost_share for s in figures.shares}
    weighted = {fold(s.team): s.weighted_share for s in figures.shares}
    teams = sorted({*waiting, *ahead, *shares})
    have_workloads = figures.preemption is not None
    return tuple(
        TeamQueueLine(
            team,
            waiting[team].waited_gpu_hours
            if team in waiting
            else (0.0 if have_workloads else None),
            waiting[team].pending_workloads
            if team in waiting
            else (0.0 if have_workloads else None),
            _cents(ahead[team]) if team in ahead else None,
            shares.get(team),
            waiting[team].percentiles.get(0.9) if team in waiting else None,
            weighted.get(team),
        )
        for team in teams
    )


def queues_of_team(table: QueueTable, team: str) -> QueueTable:
    """One team's rows of both tables."""
    return replace(
        table,
        queues=tuple(q for q in table.queues if q.team == team),
        teams=tuple(t for t in table.teams if t.team == team),
    )


def queue_lines(table: QueueTable, cells: Cells = CSV) -> list[list[str]]:
    """The per-ClusterQueue table: header first."""
    rows = [[cells.head(c) for c in QUEUE_COLUMNS]]
    for q in table.queues:
        rows.append(
            [
                q.team,
                q.cluster_queue,
                cells.usage(AMOUNT, q.nominal_gpus),
                cells.usage(AMOUNT, q.ceiling_gpus),
                cells.money(q.nominal_cost),
                cells.money(q.ceiling_cost),
                cells.money(q.preempted_cost),
                cells.usage(AMOUNT, q.preempted_gpu_hours),
            ]
        )
    return rows


def team_queue_lines(table: QueueTable, cells: Cells = CSV) -> list[list[str]]:
    """The per-team table: header first; an unknown figure is an empty cell."""
    rows = [[cells.head(c) for c in TEAM_QUEUE_COLUMNS]]
    for t in table.teams:
        rows.append(
            [
                t.team,
                "" if t.waiting_gpu_hours is None else cells.usage(AMOUNT, t.waiting_gpu_hours),
                "" if t.pending_workloads is None else cells.usage(COUNT, t.pending_workloads),
                "" if t.borrowing_next_month is None else cells.money(t.borrowing_next_month),
                "" if t.gpu_cost_share is None else cells.usage(PERCENT, 100.0 * t.gpu_cost_share),
                "" if t.wait_p90_seconds is None else cells.usage(AMOUNT, t.wait_p90_seconds),
                "" if t.weighted_share is None else cells.usage(AMOUNT, t.weighted_share),
            ]
        )
    return rows


def queue_json(table: QueueTable) -> dict[str, Any]:
    """Both tables as the JSON report carries them."""
    return {
        "cluster_queues": [
            {
                "team": q.team,
                "cluster_queue": q.cluster_queue,
                "nominal_gpus": q.nominal_gpus,
                "ceiling_gpus": q.ceiling_gpus,
                "nominal_cost": float(q.nominal_cost),
                "ceiling_cost": float(q.ceiling_cost),
                "preempted_cost": float(q.preempted_cost),
                "preempted_gpu_hours": q.preempted_gpu_hours,
            }
            for q in table.queues
        ],
        "teams": [
            {
                "team": t.team,
                "waiting_gpu_hours": t.waiting_gpu_hours,
                "pending_workloads": t.pending_workloads,
                "borrowing_next_month": (
                    None if t.borrowing_next_month is None else float(t.borrowing_next_month)
                ),
                "gpu_cost_share": t.gpu_cost_share,
                "wait_p90_seconds": t.wait_p90_seconds,
                # JSON has no Infinity: a zero weight while borrowing is written as null.
                "weighted_share": (
                    t.weighted_share
                    if t.weighted_share is not None and math.isfinite(t.weighted_share)
                    else None
                ),
            }
            for t in table.teams
        ],
        "missing": list(table.missing),
    }


def _cents(value: float) -> Decimal:
    return Decimal(repr(value)).quantize(_CENT, rounding=ROUND_HALF_EVEN)

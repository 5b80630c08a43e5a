"""The report's queue tables: printed per ClusterQueue and per team, one team's own rows."""

from __future__ import annotations

import json
from decimal import Decimal

from exporter.finance.report.queues import (
    queue_json,
    queue_lines,
    queue_table,
    queues_of_team,
    team_queue_lines,
)
from exporter.ledger.queues.borrowing import BorrowingAhead
from exporter.ledger.queues.ceiling import QueueCeiling
from exporter.ledger.queues.fairshare import TeamShare
from exporter.ledger.queues.figures import QueueFigures
from exporter.ledger.queues.preempted import PreemptedWork, Preemption
from exporter.ledger.queues.waiting import TeamWaiting


def figures(workloads: bool = True) -> QueueFigures:
    return QueueFigures(
        ceilings=(
            QueueCeiling("research", "research-cq", "gpu-pool", 2, 3, 2016.0, 3024.0),
            QueueCeiling("training", "training-cq", "gpu-pool", 4, 6, 4032.0, 6048.0),
        ),
        preemption=Preemption(
            (
                PreemptedWork("research", "research-cq", "Preempted", 1, 6.0, 8.4),
                PreemptedWork("research", "research-cq", "PodsReadyTimeout", 1, 0.5, 0.7),
                PreemptedWork("research", "old-cq", "Preempted", 1, 1.0, 1.4),
            ),
            (),
        )
        if workloads
        else None,
        waiting=(TeamWaiting("training", 1, 14.0, {}),) if workloads else (),
        shares=(TeamShare("research", None, 3000, 0.25), TeamShare("training", None, 9000, 0.75)),
        borrowing=(BorrowingAhead("research", 180.0, 1.4, 260.4),),
        missing=("metrics",) if workloads else ("metrics", "workloads"),
    )


def test_the_worked_example_in_print() -> None:
    table = queue_table(figures(), lambda team: team)
    head, research, training, old = queue_lines(table)
    assert head[:2] == ["team", "cluster_queue"]
    assert research == [
        "research", "research-cq", "2.00", "3.00", "2016.00", "3024.00", "9.10", "6.50"
    ]  # fmt: skip
    assert training[-2:] == ["0.00", "0.00"]
    assert old[:2] == ["research", "old-cq"] and old[-2] == "1.40"  # quota gone, work shown
    _, r, t = team_queue_lines(table)
    assert r == ["research", "0.00", "0", "260.40", "25.0", "", ""]
    assert t == ["training", "14.00", "1", "", "75.0", "", ""]


def test_without_workloads_their_figures_are_blank_not_zero() -> None:
    table = queue_table(figures(workloads=False), lambda team: team)
    _, r, _ = team_queue_lines(table)
    assert r[1:3] == ["", ""]
    assert json.loads(json.dumps(queue_json(table)))["missing"] == ["metrics", "workloads"]


def test_one_team_gets_its_own_rows() -> None:
    mine = queues_of_team(queue_table(figures(), lambda team: team), "training")
    assert [q.cluster_queue for q in mine.queues] == ["training-cq"]
    assert [t.team for t in mine.teams] == ["training"]
    assert mine.queues[0].ceiling_cost == Decimal("6048.00")

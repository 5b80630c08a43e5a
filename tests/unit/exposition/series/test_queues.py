"""Queue series: bounded per team and ClusterQueue, folded teams summed, parts missing said."""

from __future__ import annotations

from exporter.exposition.series.queues import queue_samples
from exporter.ledger.queues.ceiling import QueueCeiling
from exporter.ledger.queues.fairshare import TeamShare
from exporter.ledger.queues.figures import QueueFigures
from exporter.ledger.queues.preempted import PreemptedWork, Preemption, TopPreempted
from exporter.ledger.queues.waiting import TeamWaiting


def figures() -> QueueFigures:
    return QueueFigures(
        ceilings=(QueueCeiling("a", "cq-a", "pool", 2, 3, 2016.0, 3024.0),),
        preemption=Preemption(
            (
                PreemptedWork("x", "cq-x", "Preempted", 1, 6.0, 8.4),
                PreemptedWork("y", "cq-x", "Preempted", 2, 1.0, 1.4),
            ),
            (TopPreempted("x", "cq-x", "ns/sweep", "Preempted", 6.0, 8.4),),
        ),
        waiting=(TeamWaiting("x", 1, 2.0, {}), TeamWaiting("y", 2, 1.0, {})),
        shares=(TeamShare("x", None, 1.0, 0.25), TeamShare("y", None, 3.0, 0.75)),
        borrowing=(),
        missing=("metrics",),
    )


def values(fold: bool) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    other = {"x": "__other__", "y": "__other__"}
    samples = queue_samples(figures(), (lambda t: other.get(t, t)) if fold else (lambda t: t))
    return {(s.family.name, s.labels): s.value for s in samples}


def test_every_figure_is_a_series_and_the_missing_part_is_said() -> None:
    got = values(fold=False)
    assert got[("chargeback_queue_part_missing", (("part", "metrics"),))] == 1
    assert got[("chargeback_queue_part_missing", (("part", "workloads"),))] == 0
    key = (("team", "a"), ("cluster_queue", "cq-a"), ("cohort", "pool"))
    assert got[("chargeback_queue_ceiling_cost", key)] == 3024.0
    preempted = (("team", "x"), ("cluster_queue", "cq-x"), ("reason", "Preempted"))
    assert got[("chargeback_queue_preempted_gpu_seconds_month_to_date", preempted)] == 6 * 3600


def test_teams_folded_into_other_add_up() -> None:
    got = values(fold=True)
    preempted = (("team", "__other__"), ("cluster_queue", "cq-x"), ("reason", "Preempted"))
    assert got[("chargeback_queue_preempted_cost_month_to_date", preempted)] == 8.4 + 1.4
    assert got[("chargeback_queue_pending_workloads", (("team", "__other__"),))] == 3
    assert got[("chargeback_team_gpu_cost_share_ratio", (("team", "__other__"),))] == 1.0

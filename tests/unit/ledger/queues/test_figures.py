"""The queue figures of a join: Kueue's documented Workload priced, and parts missing alone."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from exporter.calendar import Month
from exporter.config.schema import Config
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.quota import QueueQuota
from exporter.ledger.queues.figures import METRICS, QueueInputs, queue_figures
from exporter.sources.kueue.workloads import parse_workload

FIXTURE = Path(__file__).parents[3] / "fixtures" / "kueue" / "workload_preempted.json"
GPU = "nvidia.com/gpu"
MARCH = Month.of(datetime(2025, 3, 1, tzinfo=UTC), ZoneInfo("UTC"))
UNTIL = datetime(2025, 3, 10, tzinfo=UTC)  # 216 hours into March


def attributor() -> Attributor:
    teams = [{"name": "a", "cluster_queues": ["cq-a"]}, {"name": "b", "cluster_queues": ["cq-b"]}]
    return Attributor(Config.model_validate({"teams": teams}))


def documented() -> dict[str, object]:
    item: dict[str, object] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return item


def inputs(workloads: bool = True) -> QueueInputs:
    w = replace(parse_workload(documented()), labels={}, cluster_queue="cq-a")
    return QueueInputs(
        quota=(
            QueueQuota("a", "cq-a", "pool", "h100", GPU, 2, 0, 0, 0, 1, math.inf),
            QueueQuota("b", "cq-b", "pool", "h100", GPU, 4, 0, 0, 0, math.inf, 2),
        ),
        workloads=(w,) if workloads else None,
        flavor_prices={"h100": 1.40},
        blended=1.0,
        gpu_cost={"a": 300.0, "b": 900.0},
        gpu_hours={"a": 2 * 216 + 36.0, "b": 100.0},
        missing=() if workloads else ("workloads",),
    )


def test_the_documented_preempted_workload_is_priced_on_its_queues_flavor() -> None:
    f = queue_figures(inputs(), attributor(), MARCH, UNTIL, top=5)
    assert f.preemption is not None
    (work,) = f.preemption.work
    # 3 GPUs admitted 10,800 s (3 h) before Kueue preempted it, at h100's 1.40.
    assert (work.team, work.cluster_queue, work.reason) == ("a", "cq-a", "Preempted")
    assert work.cost == pytest.approx(3 * 3 * 1.40)
    assert [t.workload for t in f.preemption.top] == ["team-a/sample-job"]
    # Evicted and waiting since 21:19:54 on 7 March, 3 GPUs, to the 10th at 00:00.
    (a,) = f.waiting
    assert a.waited_gpu_hours == pytest.approx(3 * (2 * 24 + 2 + 40 / 60 + 6 / 3600))
    assert f.missing == (METRICS,)


def test_without_workloads_the_quota_figures_stay_and_the_part_is_named() -> None:
    f = queue_figures(inputs(workloads=False), attributor(), MARCH, UNTIL, top=5)
    assert (f.preemption, f.waiting, f.missing) == (None, (), (METRICS, "workloads"))
    a, b = f.ceilings
    assert a.ceiling_cost == pytest.approx(3 * 1.40 * 744)
    assert b.ceiling_cost == pytest.approx(6 * 1.40 * 744)
    assert [s.cost_share for s in f.shares] == [0.25, 0.75]


def test_borrowing_ahead_at_the_months_pace_over_thirty_days() -> None:
    f = queue_figures(inputs(), attributor(), MARCH, UNTIL, top=5)
    a, b = f.borrowing
    assert b.cost == 0  # b used less than its nominal: it borrowed nothing
    assert a.gpu_hours == pytest.approx(36 * 720 / 216)
    assert a.cost == pytest.approx(36 * 720 / 216 * 720 / 720 * 1.40)  # April: 720 h


def test_kueues_metrics_give_wait_percentiles_and_weighted_shares() -> None:
    from exporter.sources.kueue_metrics.records import KueueMetrics

    metrics = KueueMetrics(
        pending={"cq-a": 3.0},
        wait={"cq-a": {60.0: 2.0, 300.0: 6.0, 900.0: 9.0, math.inf: 10.0}},
        queue_share={"cq-a": 250.0, "cq-b": 0.0},
        missing=("cohort_share",),
    )
    made = replace(inputs(workloads=False), metrics=metrics)
    f = queue_figures(made, attributor(), MARCH, UNTIL, top=5)
    (a,) = f.waiting
    assert (a.team, a.pending_workloads) == ("a", 3.0)
    assert a.percentiles[0.5] == pytest.approx(240.0)
    assert [s.weighted_share for s in f.shares] == [250.0, 0.0]
    assert f.missing == ("metrics:cohort_share", "workloads")

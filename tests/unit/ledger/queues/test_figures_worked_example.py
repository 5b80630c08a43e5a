"""docs/queues.md's worked example, figure by figure, from the exporter's own functions."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from exporter.ledger.costs.quota import QueueQuota
from exporter.ledger.queues.borrowing import borrowing_ahead
from exporter.ledger.queues.ceiling import queue_ceilings
from exporter.ledger.queues.fairshare import fair_shares
from exporter.ledger.queues.preempted import Eviction, preempted_work
from exporter.ledger.queues.waiting import Bucket, PendingSpan, histogram_quantile, waited_gpu_hours

DOC = Path(__file__).parents[4] / "docs" / "queues.md"
GPU = "nvidia.com/gpu"
PRICE = 1.40
NOVEMBER = 720.0
INF = math.inf
TEAMS = {"research-cq": "research", "training-cq": "training"}


def doc_figures() -> dict[str, str]:
    """Every `| figure | how | value |` row of the doc, by figure."""
    rows = re.findall(r"^\| ([^|]+) \| [^|]+ \| ([^|]+) \|$", DOC.read_text(encoding="utf-8"), re.M)
    return {f.strip(): v.strip() for f, v in rows if f.strip() != "figure"}


def money(value: float) -> str:
    return f"{value:,.2f}"


def quota() -> list[QueueQuota]:
    return [
        QueueQuota("research", "research-cq", "gpu-pool", "h100", GPU, 2, 0, 0, 0, 1, INF),
        QueueQuota("training", "training-cq", "gpu-pool", "h100", GPU, 4, 0, 0, 0, INF, 2),
    ]


def computed() -> dict[str, str]:
    evictions = [
        Eviction("research", "research-cq", "h100", "Preempted", 2, 3.0, "research/night-sweep-7"),
        Eviction("research", "research-cq", "h100", "PodsReadyTimeout", 1, 0.5, "research/eval-3"),
    ]
    lost = preempted_work(evictions, {"h100": PRICE})
    by_reason = {w.reason: w.cost for w in lost.work}
    ceilings = {c.cluster_queue: c for c in queue_ceilings(quota(), {"h100": PRICE}, NOVEMBER)}
    day = datetime(2026, 11, 10, tzinfo=UTC)
    span = PendingSpan("training", 4, day.replace(hour=2), day.replace(hour=5, minute=30))
    month = (datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
    waited = waited_gpu_hours([span], *month)
    buckets = [Bucket(60, 2), Bucket(300, 6), Bucket(900, 9), Bucket(INF, 10)]
    (ahead,) = borrowing_ahead({"research": 180.0}, PRICE, 744.0)
    shares = {
        s.team: s.cost_share
        for s in fair_shares(
            {"research-cq": 250.0, "training-cq": 0.0},
            {"research": 3000.0, "training": 9000.0},
            TEAMS.__getitem__,
        )
    }
    return {
        "research, preempted work (`Preempted`)": money(by_reason["Preempted"]),
        "research, preempted work (`PodsReadyTimeout`)": money(by_reason["PodsReadyTimeout"]),
        "research, thrown-away compute": money(lost.by_team()["research"]),
        "`research-cq` nominal cost": money(ceilings["research-cq"].nominal_cost),
        "`research-cq` ceiling": money(ceilings["research-cq"].ceiling_cost),
        "`training-cq` nominal cost": money(ceilings["training-cq"].nominal_cost),
        "`training-cq` ceiling": money(ceilings["training-cq"].ceiling_cost),
        "training, waiting GPU-hours": money(waited["training"]),
        "training, p50 wait": f"{histogram_quantile(0.5, buckets):g} s",
        "training, p90 wait": f"{histogram_quantile(0.9, buckets):g} s",
        "research, next month's borrowing": money(ahead.cost),
        "research, share of GPU cost": f"{shares['research']:.2f}",
        "training, share of GPU cost": f"{shares['training']:.2f}",
    }


def test_the_sweep_preempted_after_3h_on_2_gpus_costs_8_40() -> None:
    lost = preempted_work(
        [Eviction("research", "research-cq", "h100", "Preempted", 2, 3.0)], {"h100": PRICE}
    )
    assert lost.by_team() == {"research": pytest.approx(8.40)}


def test_nominal_2_borrowing_limit_1_has_a_ceiling_of_3_gpus_for_the_month() -> None:
    research = queue_ceilings(quota(), {"h100": PRICE}, NOVEMBER)[0]
    assert research.ceiling_gpus == 3
    assert research.ceiling_cost == pytest.approx(3 * 1.40 * NOVEMBER)


@pytest.mark.parametrize("figure", sorted(computed()))
def test_every_figure_of_the_doc_is_what_the_exporter_computes(figure: str) -> None:
    assert doc_figures()[figure] == computed()[figure]


def test_the_doc_has_no_figure_the_test_does_not_compute() -> None:
    assert set(doc_figures()) == set(computed())

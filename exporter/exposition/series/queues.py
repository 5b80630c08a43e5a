"""Queue series: per team and ClusterQueue, never per workload but the top N preempted."""

from __future__ import annotations

import math
from collections.abc import Callable

from exporter.exposition.catalogue.queues import (
    QUEUE_ADMISSION_WAIT_SECONDS,
    QUEUE_CEILING_COST,
    QUEUE_CEILING_GPUS,
    QUEUE_NOMINAL_COST,
    QUEUE_PART_MISSING,
    QUEUE_PENDING_WORKLOADS,
    QUEUE_PREEMPTED_COST_MONTH_TO_DATE,
    QUEUE_PREEMPTED_GPU_SECONDS_MONTH_TO_DATE,
    QUEUE_PREEMPTED_WORKLOADS_MONTH_TO_DATE,
    QUEUE_TOP_PREEMPTED_COST_MONTH_TO_DATE,
    QUEUE_WAITING_GPU_SECONDS_MONTH_TO_DATE,
    TEAM_BORROWING_NEXT_MONTH_COST,
    TEAM_GPU_COST_SHARE_RATIO,
    TEAM_WEIGHTED_SHARE,
)
from exporter.exposition.samples import Sample
from exporter.ledger.queues.figures import METRICS, WORKLOADS, QueueFigures
from exporter.ledger.result import Chargeback

__all__ = ["queue_samples", "series"]


def series(chargeback: Chargeback) -> list[Sample]:
    """With Kueue: the queue figures; teams the cap folded count as `__other__`."""
    if chargeback.queues is None:
        return []
    return queue_samples(chargeback.queues, chargeback.counted_as)


def queue_samples(
    figures: QueueFigures, fold: Callable[[str], str] = lambda team: team
) -> list[Sample]:
    """Every queue family of one join, teams named as `fold` counts them."""
    # The two parts always show, 0 when read, so a dashboard can tell read from not served.
    parts = {WORKLOADS: 0.0, METRICS: 0.0, **dict.fromkeys(figures.missing, 1.0)}
    out = [Sample.of(QUEUE_PART_MISSING, v, part=p) for p, v in sorted(parts.items())]
    for c in figures.ceilings:
        labels = {"team": fold(c.team), "cluster_queue": c.cluster_queue, "cohort": c.cohort}
        out.append(Sample.of(QUEUE_CEILING_GPUS, c.ceiling_gpus, **labels))
        out.append(Sample.of(QUEUE_CEILING_COST, c.ceiling_cost, **labels))
        out.append(Sample.of(QUEUE_NOMINAL_COST, c.nominal_cost, **labels))
    if figures.preemption is not None:
        for w in figures.preemption.work:
            labels = {"team": fold(w.team), "cluster_queue": w.cluster_queue, "reason": w.reason}
            out.append(Sample.of(QUEUE_PREEMPTED_COST_MONTH_TO_DATE, w.cost, **labels))
            seconds = w.gpu_hours * 3600.0
            out.append(Sample.of(QUEUE_PREEMPTED_GPU_SECONDS_MONTH_TO_DATE, seconds, **labels))
            out.append(Sample.of(QUEUE_PREEMPTED_WORKLOADS_MONTH_TO_DATE, w.workloads, **labels))
        for t in figures.preemption.top:
            out.append(
                Sample.of(
                    QUEUE_TOP_PREEMPTED_COST_MONTH_TO_DATE,
                    t.cost,
                    team=fold(t.team),
                    cluster_queue=t.cluster_queue,
                    workload=t.workload,
                    reason=t.reason,
                )
            )
    for wt in figures.waiting:
        for q, value in sorted(wt.percentiles.items()):
            if value is not None:
                out.append(
                    Sample.of(
                        QUEUE_ADMISSION_WAIT_SECONDS,
                        value,
                        team=fold(wt.team),
                        percentile=f"{100 * q:g}",
                    )
                )
        seconds = wt.waited_gpu_hours * 3600.0
        out.append(Sample.of(QUEUE_WAITING_GPU_SECONDS_MONTH_TO_DATE, seconds, team=fold(wt.team)))
        out.append(Sample.of(QUEUE_PENDING_WORKLOADS, wt.pending_workloads, team=fold(wt.team)))
    for b in figures.borrowing:
        out.append(Sample.of(TEAM_BORROWING_NEXT_MONTH_COST, b.cost, team=fold(b.team)))
    for s in figures.shares:
        if s.weighted_share is not None:
            out.append(Sample.of(TEAM_WEIGHTED_SHARE, s.weighted_share, team=fold(s.team)))
        if s.cost_share is not None:
            out.append(Sample.of(TEAM_GPU_COST_SHARE_RATIO, s.cost_share, team=fold(s.team)))
    return _summed(out)


def _fold(group: list[Sample]) -> float:
    values = [g.value for g in group]
    highest = group[0].family in (QUEUE_ADMISSION_WAIT_SECONDS, TEAM_WEIGHTED_SHARE)
    return max(values) if highest else math.fsum(values)


def _summed(samples: list[Sample]) -> list[Sample]:
    """Teams folded into one name add up; a wait quantile or a weighted share, not a sum over
    teams, keeps the highest."""
    merged: dict[tuple[str, tuple[tuple[str, str], ...]], list[Sample]] = {}
    for s in samples:
        merged.setdefault((s.family.name, s.labels), []).append(s)
    return [
        group[0] if len(group) == 1 else Sample(group[0].family, group[0].labels, _fold(group))
        for group in merged.values()
    ]

"""Queue families (docs/queues.md): preempted work, waiting, ceilings, borrowing ahead, shares."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

PREEMPTED = ("team", "cluster_queue", "reason")
QUEUE = ("team", "cluster_queue", "cohort")

QUEUE_PREEMPTED_COST_MONTH_TO_DATE = family(
    "queue_preempted_cost_month_to_date",
    G,
    "Compute paid for and thrown away this calendar month: GPU-seconds workloads ran before Kueue "
    "evicted them, at the applied GPU price, by eviction reason. Part of the team's cost, never "
    "added to it.",
    PREEMPTED,
    "currency",
    "kueue",
    inputs=("opencost",),
)

QUEUE_PREEMPTED_GPU_SECONDS_MONTH_TO_DATE = family(
    "queue_preempted_gpu_seconds_month_to_date",
    G,
    "GPU-seconds workloads ran before Kueue evicted them this calendar month, by eviction reason.",
    PREEMPTED,
    "gpu-seconds",
    "kueue",
)

QUEUE_PREEMPTED_WORKLOADS_MONTH_TO_DATE = family(
    "queue_preempted_workloads_month_to_date",
    G,
    "Workloads Kueue evicted after they ran, last evicted this calendar month, by reason.",
    PREEMPTED,
    "workloads",
    "kueue",
)

QUEUE_TOP_PREEMPTED_COST_MONTH_TO_DATE = family(
    "queue_top_preempted_cost_month_to_date",
    G,
    "The costliest preempted workloads of the month (sources.kueue.top_preempted of them): "
    "the only per-workload series.",
    ("team", "cluster_queue", "workload", "reason"),
    "currency",
    "kueue",
    inputs=("opencost",),
)

QUEUE_WAITING_GPU_SECONDS_MONTH_TO_DATE = family(
    "queue_waiting_gpu_seconds_month_to_date",
    G,
    "GPU-seconds a team's workloads requested while pending in Kueue this calendar month: a "
    "time, shown beside the cost, never added to it.",
    ("team",),
    "gpu-seconds",
    "kueue",
)

QUEUE_PENDING_WORKLOADS = family(
    "queue_pending_workloads",
    G,
    "A team's Kueue workloads pending now (no quota reserved, not finished).",
    ("team",),
    "workloads",
    "kueue",
)

QUEUE_ADMISSION_WAIT_SECONDS = family(
    "queue_admission_wait_seconds",
    G,
    "A team's admission wait this calendar month at the percentile (50, 90, 99), from Kueue's "
    "kueue_admission_wait_time_seconds histogram over its ClusterQueues. Only with "
    "sources.kueue_metrics.",
    # Not `quantile`: that label belongs to summaries, and this gauge is not one.
    ("team", "percentile"),
    "seconds",
    "kueue_metrics",
)

TEAM_WEIGHTED_SHARE = family(
    "team_weighted_share",
    G,
    "Kueue's weighted share under fair sharing, the highest of the team's ClusterQueues (0 at "
    "or below nominal quota; +Inf for a zero weight while borrowing). Only with "
    "sources.kueue_metrics and fair sharing on.",
    ("team",),
    "ratio",
    "kueue_metrics",
)

QUEUE_CEILING_GPUS = family(
    "queue_ceiling_gpus",
    G,
    "The most GPUs a ClusterQueue can hold: nominal quota plus what it may borrow within its "
    "cohort (bounded by its borrowing limit and by what the rest of the cohort can lend).",
    QUEUE,
    "gpus",
    "kueue",
)

QUEUE_CEILING_COST = family(
    "queue_ceiling_cost",
    G,
    "A ClusterQueue's ceiling for the calendar month: its ceiling GPUs at the applied price for "
    "every hour of the month, the most a team can be charged for it under reservation.",
    QUEUE,
    "currency",
    "kueue",
    inputs=("opencost",),
)

QUEUE_NOMINAL_COST = family(
    "queue_nominal_cost",
    G,
    "What a ClusterQueue's nominal GPU quota costs for the calendar month at the applied price.",
    QUEUE,
    "currency",
    "kueue",
    inputs=("opencost",),
)

TEAM_BORROWING_NEXT_MONTH_COST = family(
    "team_borrowing_next_month_cost",
    G,
    "Next month's borrowing at today's price if the team borrows as it did at this month's pace "
    "over 30 days: a forecast, not a bill.",
    ("team",),
    "currency",
    "kueue",
    inputs=("opencost",),
)

TEAM_GPU_COST_SHARE_RATIO = family(
    "team_gpu_cost_share_ratio",
    G,
    "The team's share (0..1) of the month's GPU cost, beside Kueue's weighted share; over every "
    "team the shares add up to 1.",
    ("team",),
    "ratio",
    "opencost",
    inputs=("kueue",),
)

QUEUE_PART_MISSING = family(
    "queue_part_missing",
    G,
    "1 for a part of the queue figures not read (workloads, metrics, or metrics:<part> for one "
    "of Kueue's metrics without series), 0 for workloads and metrics when read: the figures "
    "that need a missing part are absent while the quota figures stay.",
    ("part",),
    "-",
    "kueue",
)

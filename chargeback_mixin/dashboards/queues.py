"""Dashboard `chargeback-queues-cost`: what waiting, preemption and borrowing cost each team."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards.lib import (
    Section,
    Units,
    assemble,
    columns_table,
    label_var,
    query,
    series,
    stat_panel,
    table_panel,
    timeseries_panel,
)

__all__ = ["build"]

TEAM = 'team=~"$team"'
QUANTILES = 'percentile=~"50|90"'


def _preempted(c: MixinConfig, u: Units) -> Section:
    def by_reason(metric: str) -> str:
        return f"sum by (team, reason) ({metric}{c.sel(TEAM)})"

    return (
        "Preempted work",
        [
            timeseries_panel(
                "Preempted work by reason",
                "Compute paid for and thrown away this month: GPU-hours workloads ran before "
                "Kueue evicted them, at the applied GPU price, by eviction reason. Part of the "
                "team's GPU cost, not added to it.",
                u.money,
                [
                    query(
                        by_reason("chargeback_queue_preempted_cost_month_to_date"),
                        "{{team}} {{reason}}",
                    )
                ],
                width=12,
            ),
            timeseries_panel(
                "Preempted GPU-hours and workloads",
                "GPU-hours thrown away this month, and how many workloads lost them.",
                u.gpu_hours,
                series(
                    (
                        f"{by_reason('chargeback_queue_preempted_gpu_seconds_month_to_date')}"
                        " / 3600",
                        "{{team}} {{reason}} GPU-h",
                    ),
                    (
                        by_reason("chargeback_queue_preempted_workloads_month_to_date"),
                        "{{team}} {{reason}} workloads",
                    ),
                ),
                width=12,
            ),
            table_panel(
                "Costliest preempted workloads",
                "The month's most expensive evicted workloads (sources.kueue.top_preempted of "
                "them).",
                u.money,
                [
                    query(
                        "sort_desc(sum by (team, cluster_queue, workload, reason) "
                        f"(chargeback_queue_top_preempted_cost_month_to_date{c.sel(TEAM)}))",
                        instant=True,
                    )
                ],
            ),
        ],
    )


def _waiting(c: MixinConfig, u: Units) -> Section:
    return (
        "Waiting (a time, not money)",
        [
            timeseries_panel(
                "Waiting GPU-hours",
                "GPU-hours each team requested while its workloads waited in Kueue this month.",
                u.gpu_hours,
                [
                    query(
                        "sum by (team) (chargeback_queue_waiting_gpu_seconds_month_to_date"
                        f"{c.sel(TEAM)}) / 3600",
                        "{{team}}",
                    )
                ],
                width=12,
            ),
            timeseries_panel(
                "Admission wait, p50 and p90",
                "How long each team's workloads waited for admission this month, from Kueue's "
                "own histogram (needs sources.kueue_metrics).",
                u.seconds,
                [
                    query(
                        "max by (team, percentile) (chargeback_queue_admission_wait_seconds"
                        f"{c.sel(TEAM, QUANTILES)})",
                        "{{team}} p{{percentile}}",
                    )
                ],
                width=12,
            ),
            timeseries_panel(
                "Pending workloads",
                "Workloads of each team pending in Kueue now.",
                u.count,
                [
                    query(
                        f"sum by (team) (chargeback_queue_pending_workloads{c.sel(TEAM)})",
                        "{{team}}",
                    )
                ],
                width=12,
            ),
        ],
    )


def _ceilings(c: MixinConfig, u: Units) -> Section:
    fields = ("ceiling_gpus", "nominal_cost", "ceiling_cost")
    return (
        "Ceilings, borrowing ahead and fair share",
        [
            columns_table(
                "ClusterQueue ceilings",
                "Each ClusterQueue's most GPUs (nominal plus what it may borrow in its cohort), "
                "what its nominal quota costs for the month, and its ceiling: the most the team "
                "can be charged for it under the reservation policy.",
                u.money,
                [
                    (f, f"sum by (team, cluster_queue, cohort) (chargeback_queue_{f}{c.sel(TEAM)})")
                    for f in fields
                ],
            ),
            stat_panel(
                "Borrowing next month, at this month's pace",
                "What each team's borrowing would cost next month at today's price if it "
                "borrows as it has this month: a forecast, not a bill.",
                u.money,
                [
                    query(
                        f"sum by (team) (chargeback_team_borrowing_next_month_cost{c.sel(TEAM)})",
                        "{{team}}",
                    )
                ],
                width=12,
            ),
            stat_panel(
                "Share of the month's GPU cost",
                "Each team's part of the month's GPU cost, to set beside its fair share.",
                u.ratio,
                [
                    query(
                        f"sum by (team) (chargeback_team_gpu_cost_share_ratio{c.sel(TEAM)})",
                        "{{team}}",
                    )
                ],
                width=8,
            ),
            stat_panel(
                "Kueue weighted share",
                "Kueue's own fair-sharing figure, the highest of each team's ClusterQueues: 0 at "
                "or below nominal quota, larger the more a team borrows for its weight. Set it "
                "beside the share of the GPU cost (needs sources.kueue_metrics and fair sharing).",
                u.count,
                [query(f"max by (team) (chargeback_team_weighted_share{c.sel(TEAM)})", "{{team}}")],
                width=12,
            ),
            stat_panel(
                "Parts not read",
                "1 for each part of the queue figures the exporter could not read, 0 when read "
                "(workloads: Kueue Workload objects; metrics: Kueue's own metrics). Quota "
                "figures stay either way.",
                u.count,
                [query(f"max by (part) (chargeback_queue_part_missing{c.sel()})", "{{part}}")],
                width=4,
            ),
        ],
    )


def build(c: MixinConfig) -> Dashboard:
    """The queues-and-cost dashboard."""
    u = Units(c)
    return assemble(
        c,
        "queues-cost",
        "Chargeback / Queues and cost",
        "What Kueue's scheduling costs each team: work preempted and thrown away, time waited, "
        "each ClusterQueue's ceiling, next month's borrowing and the share of the GPU bill.",
        [_preempted(c, u), _waiting(c, u), _ceilings(c, u)],
        [label_var(c, "team", "chargeback_queue_ceiling_cost", label="Team", include_all=True)],
    )

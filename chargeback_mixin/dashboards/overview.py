"""Dashboard `chargeback-overview`: the cluster's cost by team, idle and unallocated shares."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards.lib import (
    RATE_INTERVAL,
    Section,
    Units,
    assemble,
    columns_table,
    query,
    series,
    stat_panel,
    table_panel,
    timeseries_panel,
)
from chargeback_mixin.rules import (
    HARDWARE_COST,
    IDLE_GPU_RATIO,
    MONTH_FORECAST,
    UNALLOCATED_COST_RATIO,
)

__all__ = ["build"]


def _headline(u: Units) -> Section:
    return (
        "Cluster",
        [
            stat_panel(
                "Cost per hour",
                "Whole cost rate: every team's components, including __idle__, __unallocated__ "
                "and external LLM spend.",
                u.money_per_hour,
                [query("cluster:chargeback_team_cost_per_hour:sum")],
            ),
            stat_panel(
                "Month to date",
                "Whole cost since the start of the calendar month (exporter's time zone).",
                u.money,
                [query("sum(team:chargeback_team_cost_month_to_date:sum)")],
            ),
            stat_panel(
                "Idle GPU share",
                "Idle GPU cost over the cluster's GPU cost rate (OpenCost's idle, before any "
                "policy shares it out); CPU and memory idle do not count.",
                u.ratio,
                [query(IDLE_GPU_RATIO)],
            ),
            stat_panel(
                "Unallocated share",
                "Cost on __unallocated__ (no team owns it) over the whole cost rate.",
                u.ratio,
                [query(UNALLOCATED_COST_RATIO)],
            ),
        ],
    )


def _by_team(c: MixinConfig, u: Units) -> Section:
    return (
        "By team",
        [
            timeseries_panel(
                "Cost per hour by team",
                "Each team's cost rate, all components, stacked; reserved teams included.",
                u.money_per_hour,
                [query("team:chargeback_team_cost_per_hour:sum", "{{team}}")],
                stacked=True,
            ),
            timeseries_panel(
                "Month to date by team",
                "Each team's cost since the start of the month; drops to zero when a month ends.",
                u.money,
                [query("team:chargeback_team_cost_month_to_date:sum", "{{team}}")],
                stacked=True,
            ),
            timeseries_panel(
                "Idle GPU and unallocated shares",
                "Share of the GPU cost rate that sits idle, and share of the whole cost rate no "
                "team owns.",
                u.ratio,
                series(
                    (IDLE_GPU_RATIO, "idle GPUs"),
                    (UNALLOCATED_COST_RATIO, "unallocated"),
                ),
            ),
            timeseries_panel(
                "Cost per hour: chargeback against OpenCost",
                "The exporter's hardware cost rate over all teams beside OpenCost's cluster "
                "cost; the lines overlap when no cost is lost or counted twice.",
                u.money_per_hour,
                series(
                    (HARDWARE_COST, "chargeback"),
                    (f"sum(chargeback_cluster_cost_per_hour{c.sel()})", "opencost"),
                ),
            ),
        ],
    )


def _report(u: Units) -> Section:
    gpu, llm = '{kind="gpu"}', '{kind="llm"}'
    cols = [
        ("team:chargeback_team_cost_month_to_date:sum", "Month to date"),
        (f"team_kind:chargeback_team_cost_month_to_date:sum{gpu}", "GPU month to date"),
        (f"team_kind:chargeback_team_budget:sum{gpu}", "GPU budget"),
        (f"{MONTH_FORECAST}{gpu}", "GPU forecast"),
        (f"team_kind:chargeback_team_cost_month_to_date:sum{llm}", "LLM month to date"),
        (f"team_kind:chargeback_team_budget:sum{llm}", "LLM budget"),
        (f"{MONTH_FORECAST}{llm}", "LLM forecast"),
    ]
    return (
        "Chargeback this month",
        [
            columns_table(
                "Month-to-date chargeback",
                "Per team: cost this month; GPU (hardware components) and LLM (llm_external) "
                "month to date, monthly budget and end-of-month forecast (month to date + "
                "current rate x hours left in the month, UTC).",
                u.money,
                [(name, f"sum by (team) ({expr})") for expr, name in cols],
                height=10,
            ),
        ],
    )


def _backlog(c: MixinConfig, u: Units) -> Section:
    labels = ", ".join((c.cluster_label, "kind", "namespace", "workload", "team", "key"))
    backlog = "chargeback_labelling_backlog_cost_month_to_date"
    return (
        "Labelling backlog",
        [
            table_panel(
                "What to label first",
                "Month-to-date cost of the workloads no key placed (kind unallocated; label "
                "them with one of the team keys) and of those only a fallback key placed (kind "
                "fallback), largest first; 20 per kind, the rest as __other__. The cost is the "
                "workload's own, before any idle policy.",
                u.money,
                [query(f"sort_desc(sum by ({labels}) ({backlog}{c.sel()}))", instant=True)],
                rename={"Value": "Month to date"},
                height=10,
            ),
        ],
    )


def _health(c: MixinConfig, u: Units) -> Section:
    return (
        "Sources",
        [
            timeseries_panel(
                "Source refresh errors",
                "Failed refreshes per second by source and reason; a failing source serves its "
                "last good values until they go stale.",
                u.errors_per_second,
                [
                    query(
                        "sum by (source, reason) "
                        f"(rate(chargeback_source_errors_total{c.sel()}[{RATE_INTERVAL}]))",
                        "{{source}} {{reason}}",
                    )
                ],
            ),
            timeseries_panel(
                "Source data age",
                "Seconds since each source's last successful refresh.",
                u.seconds,
                [
                    query(
                        "time() - max by (source) "
                        f"(chargeback_source_last_success_timestamp_seconds{c.sel()})",
                        "{{source}}",
                    )
                ],
            ),
            timeseries_panel(
                "Source backoff (Retry-After)",
                "Seconds each source's upstream asked the exporter to wait after its last "
                "failed refresh (Retry-After, honoured up to 10 minutes); its next refresh "
                "waits that long. 0: not asked to wait.",
                u.seconds,
                [
                    query(
                        f"max by (source) (chargeback_source_backoff_seconds{c.sel()})",
                        "{{source}}",
                    )
                ],
            ),
            timeseries_panel(
                "Refresh worker",
                "1 while the exporter's refresh worker works (0: it cannot start, or its "
                "figures went stale: see ChargebackWorkerDown), and how often it was restarted "
                "since the exporter started.",
                u.count,
                series(
                    (f"min (chargeback_worker_up{c.sel()})", "worker up"),
                    (f"max (chargeback_worker_restarts_total{c.sel()})", "restarts"),
                ),
            ),
        ],
    )


def build(c: MixinConfig) -> Dashboard:
    """The overview dashboard."""
    u = Units(c)
    return assemble(
        c,
        "overview",
        "Chargeback / Overview",
        "What the cluster costs per team now and this month, what sits idle, what nobody owns, "
        "and each team's month against its budgets.",
        [_headline(u), _by_team(c, u), _report(u), _backlog(c, u), _health(c, u)],
    )

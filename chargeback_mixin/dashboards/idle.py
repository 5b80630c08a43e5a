"""Dashboard `chargeback-idle-waste`: idle capacity, who pays for it, and GPUs held but idle."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards.advice_panels import advice_section
from chargeback_mixin.dashboards.lib import (
    Section,
    Units,
    assemble,
    month_so_far,
    query,
    series,
    stat_panel,
    timeseries_panel,
)
from chargeback_mixin.dashboards.unit_panels import gpu_prices_section
from chargeback_mixin.rules import (
    IDLE_COST_RATIO,
    IDLE_GPU_COST_MTD,
    IDLE_GPU_RATIO,
    IDLE_GPU_SECONDS_MTD,
    IDLE_RESOURCE_RATIO,
    UNALLOCATED_COST_RATIO,
)

__all__ = ["build"]

IDLE_TEAM = 'team="__idle__"'
GPU = 'resource="gpu"'
IDLE_BY_RESOURCE = "cluster_resource:chargeback_cluster_idle_cost_per_hour:sum"
IDLE_RATIO_BY_RESOURCE = IDLE_RESOURCE_RATIO
IDLE_MONTH_BY_RESOURCE = "cluster_resource:chargeback_cluster_idle_cost_month_to_date:sum"
IDLE_SHARE = 'component="idle_share"'
# The month to date from DCGM's history when the exporter has it, else integrated by the rules
# from the GPU states the exporter served (each team's series is one or the other).
IDLE_SECONDS = "team:chargeback_team_gpu_idle_seconds_month_to_date:sum"
IDLE_SECONDS_FALLBACK = f"sum without (state) ({IDLE_GPU_SECONDS_MTD})"
IDLE_COST = "team:chargeback_team_gpu_waste_cost_month_to_date:sum"
FROM_HISTORY = (
    "With sources.dcgm.prometheus, from DCGM's utilisation history at each GPU model's current "
    "price; with urls or discovery (no history), from the idle GPUs and their cost rate the "
    "exporter served, sampled every half hour since the month began, as far back as Prometheus "
    "keeps them. The panel shows the month so far."
)


def _idle(c: MixinConfig, u: Units) -> Section:
    cost = "chargeback_team_cost_per_hour"
    return (
        "Idle capacity",
        [
            stat_panel(
                "Idle GPU cost per hour",
                "Cost rate of the GPUs no workload used, as OpenCost reports it before any "
                "policy shares it out.",
                u.money_per_hour,
                [query(f"{IDLE_BY_RESOURCE}{{{GPU}}}")],
                width=8,
            ),
            stat_panel(
                "Idle GPU share",
                "Idle GPU cost over the cluster's GPU cost rate; CPU and memory idle do not count.",
                u.ratio,
                [query(IDLE_GPU_RATIO)],
                width=8,
            ),
            stat_panel(
                "GPUs idle or unallocated",
                "GPUs allocated but idle plus GPUs no pod holds, cluster-wide.",
                u.gpus,
                [query('sum(team_state:chargeback_gpus:sum{state=~"idle|unallocated"})')],
                width=8,
            ),
            timeseries_panel(
                "Idle cost per hour by resource",
                "Cost rate of idle GPUs, CPU and memory, before any policy shares it out.",
                u.money_per_hour,
                [query(f"sum by (resource) ({IDLE_BY_RESOURCE})", "{{resource}}")],
                stacked=True,
            ),
            timeseries_panel(
                "Idle share by resource",
                "Each resource's idle cost over its cost rate, and all idle capacity (the "
                "__idle__ team plus every idle_share) over the hardware cost rate.",
                u.ratio,
                series(
                    (IDLE_RATIO_BY_RESOURCE, "{{resource}}"),
                    (IDLE_COST_RATIO, "all hardware"),
                ),
            ),
            timeseries_panel(
                "Idle cost this month by resource",
                "Idle cost of GPUs, CPU and memory since the start of the month (exporter's "
                "time zone); drops to zero when a month ends.",
                u.money,
                [query(f"sum by (resource) ({IDLE_MONTH_BY_RESOURCE})", "{{resource}}")],
                stacked=True,
            ),
            timeseries_panel(
                "Who pays for idle capacity",
                "Idle cost rate of every resource by payer: __idle__ is nobody (showback); "
                "teams pay their idle_share under the proportional policy.",
                u.money_per_hour,
                [
                    query(
                        f"sum by (team) ({cost}{c.sel(IDLE_TEAM)} or {cost}{c.sel(IDLE_SHARE)})",
                        "{{team}}",
                    )
                ],
                stacked=True,
            ),
            timeseries_panel(
                "GPUs by state",
                "Cluster GPUs: busy, idle (allocated below the utilisation threshold) and "
                "unallocated.",
                u.gpus,
                [query("sum by (state) (team_state:chargeback_gpus:sum)", "{{state}}")],
                stacked=True,
                width=24,
            ),
        ],
    )


def _waste(u: Units) -> Section:
    return (
        "Waste by team",
        [
            timeseries_panel(
                "Idle GPUs by team",
                "GPUs each team holds below the utilisation threshold.",
                u.gpus,
                [query('team_state:chargeback_gpus:sum{state="idle"}', "{{team}}")],
                width=8,
            ),
            timeseries_panel(
                "GPU utilisation by team",
                "Mean DCGM utilisation of each team's GPUs.",
                u.ratio,
                [query("team:chargeback_team_gpu_utilization_ratio:avg", "{{team}}")],
                width=8,
            ),
            timeseries_panel(
                "Idle GPU cost per hour by team",
                "Cost rate of GPUs each team holds but leaves idle.",
                u.money_per_hour,
                [query("team:chargeback_team_gpu_waste_cost_per_hour:sum", "{{team}}")],
                width=8,
                stacked=True,
            ),
            month_so_far(
                timeseries_panel(
                    "Idle GPU-hours this month by team",
                    "GPU-hours each team's pods held GPUs below the idle threshold since the "
                    "start of the month. " + FROM_HISTORY,
                    u.gpu_hours,
                    [query(f"({IDLE_SECONDS} or {IDLE_SECONDS_FALLBACK}) / 3600", "{{team}}")],
                    stacked=True,
                )
            ),
            month_so_far(
                timeseries_panel(
                    "Idle GPU cost this month by team",
                    "Cost of each team's idle GPU-hours since the start of the month. "
                    + FROM_HISTORY,
                    u.money,
                    [query(f"{IDLE_COST} or {IDLE_GPU_COST_MTD}", "{{team}}")],
                    stacked=True,
                )
            ),
            timeseries_panel(
                "Unallocated share",
                "Share of the whole cost rate that no team owns (__unallocated__).",
                u.ratio,
                [query(UNALLOCATED_COST_RATIO, "unallocated")],
                width=24,
            ),
        ],
    )


def build(c: MixinConfig) -> Dashboard:
    """The idle-and-waste dashboard."""
    u = Units(c)
    return assemble(
        c,
        "idle-waste",
        "Chargeback / Idle and waste",
        "How much of the cluster sits idle, what that costs and who pays for it, and which "
        "teams hold GPUs they do not use.",
        [_idle(c, u), _waste(u), advice_section(c, u), gpu_prices_section(c, u)],
    )

"""Dashboard `chargeback-idle-waste`: idle capacity, who pays for it, and GPUs held but idle."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards.lib import (
    Section,
    Units,
    assemble,
    query,
    stat_panel,
    timeseries_panel,
)

__all__ = ["build"]

IDLE_TEAM = 'team="__idle__"'
IDLE_SHARE = 'component="idle_share"'


def _idle(c: MixinConfig, u: Units) -> Section:
    cost = "chargeback_team_cost_per_hour"
    return (
        "Idle capacity",
        [
            stat_panel(
                "Idle cost per hour",
                "Idle capacity's cost rate: the __idle__ team plus every team's idle_share.",
                u.money_per_hour,
                [query("cluster:chargeback_idle_cost_per_hour:sum")],
                width=8,
            ),
            stat_panel(
                "Idle share",
                "Idle cost over the cluster's hardware cost rate.",
                u.ratio,
                [query("cluster:chargeback_idle_cost_per_hour:ratio")],
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
                "Who pays for idle capacity",
                "Idle cost rate by payer: __idle__ is nobody (showback); teams pay their "
                "idle_share under the proportional policy.",
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
            timeseries_panel(
                "Unallocated share",
                "Share of the whole cost rate that no team owns (__unallocated__).",
                u.ratio,
                [query("cluster:chargeback_unallocated_cost_per_hour:ratio", "unallocated")],
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
        [_idle(c, u), _waste(u)],
    )

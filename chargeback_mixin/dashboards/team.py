"""Dashboard `chargeback-team`: one team's burn rate, budget, GPUs, quota and LLM spend."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards.advice_panels import advice_section
from chargeback_mixin.dashboards.lib import (
    RATE_INTERVAL,
    Section,
    Units,
    assemble,
    label_var,
    query,
    series,
    stat_panel,
    timeseries_panel,
)
from chargeback_mixin.rules import (
    BUDGET_FORECAST_RATIO,
    BUDGET_USED_RATIO,
    COST_DEPARTURE,
    MONTH_FORECAST,
    MONTH_HOURS_ELAPSED,
    MONTH_HOURS_LENGTH,
)

__all__ = ["build"]

TEAM = 'team="$team"'


def _money(u: Units) -> Section:
    return (
        "Cost and budget",
        [
            stat_panel(
                "Cost per hour",
                "The team's current cost rate, all components.",
                u.money_per_hour,
                [query(f"team:chargeback_team_cost_per_hour:sum{{{TEAM}}}")],
            ),
            stat_panel(
                "Month to date",
                "The team's cost since the start of the month, all components.",
                u.money,
                [query(f"team:chargeback_team_cost_month_to_date:sum{{{TEAM}}}")],
            ),
            stat_panel(
                "Budget used",
                "Month to date over the monthly budget: gpu = hardware components, "
                "llm = llm_external; beside it, how much of the month (exporter's time zone) "
                "has gone.",
                u.ratio,
                series(
                    (f"{BUDGET_USED_RATIO}{{{TEAM}}}", "{{kind}}"),
                    (f"{MONTH_HOURS_ELAPSED} / {MONTH_HOURS_LENGTH}", "month elapsed"),
                ),
            ),
            stat_panel(
                "Budget at month end (forecast)",
                "Month to date + current rate x hours left in the month (exporter's time zone), "
                "over the budget.",
                u.ratio,
                [query(f"{BUDGET_FORECAST_RATIO}{{{TEAM}}}", "{{kind}}")],
            ),
            timeseries_panel(
                "Burn rate by component",
                "The team's cost rate split by component; borrowed and lent come from Kueue, "
                "llm_* from LiteLLM.",
                u.money_per_hour,
                [
                    query(
                        f"team_component:chargeback_team_cost_per_hour:sum{{{TEAM}}}",
                        "{{component}}",
                    )
                ],
                stacked=True,
            ),
            timeseries_panel(
                "Cost against its own baseline",
                "The team's mean cost per hour over the recent window against its mean over "
                "the baseline window, minus one: what ChargebackTeamCostAnomaly reads.",
                u.ratio,
                [
                    query(
                        f"{COST_DEPARTURE}{{{TEAM}}}",
                        "{{team}}",
                    )
                ],
            ),
            timeseries_panel(
                "Month to date, budget and forecast",
                "Month to date, monthly budget and end-of-month forecast per budget kind.",
                u.money,
                series(
                    (
                        f"team_kind:chargeback_team_cost_month_to_date:sum{{{TEAM}}}",
                        "{{kind}} month to date",
                    ),
                    (f"team_kind:chargeback_team_budget:sum{{{TEAM}}}", "{{kind}} budget"),
                    (f"{MONTH_FORECAST}{{{TEAM}}}", "{{kind}} forecast"),
                ),
            ),
        ],
    )


def _gpus(c: MixinConfig, u: Units) -> Section:
    gpu = f'resource="{c.gpu_resource}"'
    return (
        "GPUs and quota",
        [
            timeseries_panel(
                "GPUs by state",
                "GPUs the team holds: busy, or idle (allocated but below the utilisation "
                "threshold).",
                u.gpus,
                [query(f"team_state:chargeback_gpus:sum{{{TEAM}}}", "{{state}}")],
                width=8,
                stacked=True,
            ),
            timeseries_panel(
                "GPU utilisation",
                "Mean DCGM utilisation of the team's GPUs.",
                u.ratio,
                [query(f"team:chargeback_team_gpu_utilization_ratio:avg{{{TEAM}}}", "{{team}}")],
                width=8,
            ),
            timeseries_panel(
                "Idle GPU cost per hour",
                "Cost rate of the GPUs the team holds but leaves idle.",
                u.money_per_hour,
                [query(f"team:chargeback_team_gpu_waste_cost_per_hour:sum{{{TEAM}}}", "{{team}}")],
                width=8,
            ),
            timeseries_panel(
                "GPU quota by ClusterQueue",
                "Kueue GPU quota of the team's ClusterQueues: nominal, in use, borrowed from "
                "the cohort and lent to it.",
                u.gpus,
                series(
                    *(
                        (
                            f"sum by (cluster_queue) (chargeback_quota_{name}{c.sel(TEAM, gpu)})",
                            "{{cluster_queue}} " + name,
                        )
                        for name in ("nominal", "usage", "borrowed", "lent")
                    )
                ),
            ),
            timeseries_panel(
                "Borrowing cost per hour",
                "What the team pays for quota it borrows (borrowed component) and is credited "
                "for quota it lends (lent component).",
                u.money_per_hour,
                [
                    query(
                        "team_component:chargeback_team_cost_per_hour:sum"
                        f'{{{TEAM}, component=~"borrowed|lent"}}',
                        "{{component}}",
                    )
                ],
            ),
        ],
    )


def _llm(c: MixinConfig, u: Units) -> Section:
    return (
        "LLM",
        [
            timeseries_panel(
                "LLM spend this month by model",
                "LiteLLM spend this month per model, as LiteLLM prices it.",
                u.money,
                [
                    query(
                        f"sum by (model) (chargeback_llm_spend_month_to_date{c.sel(TEAM)})",
                        "{{model}}",
                    )
                ],
                stacked=True,
            ),
            timeseries_panel(
                "Tokens per second by model",
                "Tokens per second per model: the slope of the month-to-date token count (a "
                "gauge, so deriv() rather than rate()); the month's reset reads as 0.",
                u.tokens_per_second,
                [
                    query(
                        "sum by (model) (clamp_min("
                        f"deriv(chargeback_llm_tokens_month_to_date{c.sel(TEAM)}"
                        f"[{RATE_INTERVAL}]), 0))",
                        "{{model}}",
                    )
                ],
            ),
        ],
    )


def build(c: MixinConfig) -> Dashboard:
    """The per-team dashboard."""
    u = Units(c)
    return assemble(
        c,
        "team",
        "Chargeback / Team",
        "One team: what it costs now and this month, its budgets and forecast, the GPUs and "
        "quota it holds and borrows, and its LLM spend.",
        [_money(u), _gpus(c, u), advice_section(c, u, TEAM), _llm(c, u)],
        [label_var(c, "team", "chargeback_team_cost_per_hour", label="Team")],
    )

"""Dashboard `chargeback-llm`: LLM spend, tokens, LiteLLM budgets and self-hosted pricing."""

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
    timeseries_panel,
)
from chargeback_mixin.dashboards.unit_panels import token_costs_section
from chargeback_mixin.rules import LLM_BUDGET_FORECAST_RATIO, LLM_BUDGET_RATIO, LLM_PRICE_DRIFT

__all__ = ["build"]


def _spend(c: MixinConfig, u: Units) -> Section:
    return (
        "Spend",
        [
            timeseries_panel(
                "LLM spend this month by team",
                "LiteLLM spend this calendar month per team, as LiteLLM prices it.",
                u.money,
                [query("team:chargeback_llm_spend_month_to_date:sum", "{{team}}")],
                stacked=True,
            ),
            timeseries_panel(
                "LLM spend this month by model",
                "LiteLLM spend this calendar month per model.",
                u.money,
                [
                    query(
                        f"sum by (model) (chargeback_llm_spend_month_to_date{c.sel()})",
                        "{{model}}",
                    )
                ],
                stacked=True,
            ),
            timeseries_panel(
                "Tokens per second by model",
                "Prompt and completion tokens per second: the slope of the month-to-date token "
                "count (a gauge, so deriv() rather than rate()); the month's reset reads as 0.",
                u.tokens_per_second,
                [
                    query(
                        "sum by (model, direction) (clamp_min(deriv("
                        f"chargeback_llm_tokens_month_to_date{c.sel()}[{RATE_INTERVAL}]), 0))",
                        "{{model}} {{direction}}",
                    )
                ],
            ),
            timeseries_panel(
                "Spend per request by model",
                "LiteLLM spend this calendar month over its requests, per model: what one "
                "request costs on average.",
                u.money,
                [
                    query(
                        f"sum by (model) (chargeback_llm_spend_month_to_date{c.sel()}) / "
                        f"(sum by (model) (chargeback_llm_requests_month_to_date{c.sel()}) > 0)",
                        "{{model}}",
                    )
                ],
            ),
            timeseries_panel(
                "LLM chargeback this month by team",
                "What the exporter charges teams for LLM use: llm_external (providers' bills) "
                "and llm_serving (self-hosted serving cost moved from the serving team to the "
                "teams that sent tokens; the serving team's share is negative).",
                u.money,
                [
                    query(
                        "team_component:chargeback_team_cost_month_to_date:sum"
                        '{component=~"llm_external|llm_serving"}',
                        "{{team}} {{component}}",
                    )
                ],
                width=24,
            ),
        ],
    )


def _budgets(c: MixinConfig, u: Units) -> Section:
    cols = [
        ("chargeback_llm_budget_spend", "Spend in window"),
        ("chargeback_llm_budget_soft", "Soft budget"),
        ("chargeback_llm_budget_max", "Max budget"),
    ]
    return (
        "LiteLLM budgets",
        [
            timeseries_panel(
                "Budget window used",
                "LiteLLM spend over max_budget in the current budget window; LiteLLM rejects "
                "requests at 100%.",
                u.ratio,
                [query(LLM_BUDGET_RATIO, "{{team}}")],
            ),
            timeseries_panel(
                "Budget window at reset (forecast)",
                "Spend at the next LiteLLM reset if it grows as it did lately, over max_budget.",
                u.ratio,
                [query(LLM_BUDGET_FORECAST_RATIO, "{{team}}")],
            ),
            columns_table(
                "LiteLLM team budgets",
                "Spend in the current LiteLLM budget window, soft and max budgets per team.",
                u.money,
                [(name, f"sum by (team) ({m}{c.sel()})") for m, name in cols],
                width=12,
            ),
            timeseries_panel(
                "Time to budget reset",
                "Seconds until LiteLLM resets each team's budget window.",
                u.seconds,
                [
                    query(
                        "max by (team) "
                        f"(chargeback_llm_budget_reset_timestamp_seconds{c.sel()}) - time()",
                        "{{team}}",
                    )
                ],
            ),
        ],
    )


def _pricing(c: MixinConfig, u: Units) -> Section:
    return (
        "Self-hosted pricing",
        [
            timeseries_panel(
                "Cost per token: declared and measured",
                "Per weighted token of each self-hosted model: LiteLLM's declared price and "
                "the measured serving cost.",
                u.money,
                [
                    query(
                        f"max by (model, basis) (chargeback_llm_cost_per_token{c.sel()})",
                        "{{model}} {{basis}}",
                    )
                ],
                width=8,
            ),
            timeseries_panel(
                "Declared over measured",
                "Declared price over measured cost per token; 100% means LiteLLM's price "
                "matches what serving costs.",
                u.ratio,
                [query(LLM_PRICE_DRIFT, "{{model}}")],
                width=8,
            ),
            timeseries_panel(
                "Recommended LiteLLM prices",
                "input_cost_per_token and output_cost_per_token to declare in LiteLLM so its "
                "price matches the measured cost.",
                u.money,
                [
                    query(
                        "max by (model, direction) "
                        f"(chargeback_llm_recommended_cost_per_token{c.sel()})",
                        "{{model}} {{direction}}",
                    )
                ],
                width=8,
            ),
        ],
    )


def _weights(c: MixinConfig, u: Units) -> Section:
    return (
        "Completion weight",
        [
            timeseries_panel(
                "Completion weight: configured, measured, applied",
                "w in prompt + w x completion per self-hosted model: the configured one, the "
                "one measured from vLLM's decode and prefill time, and the one applied "
                "(docs/llm.md); chargeback_llm_completion_weight_fallback says why a measured "
                "one is not applied.",
                u.count,
                [
                    query(
                        f"max by (model, basis) (chargeback_llm_completion_weight{c.sel()})",
                        "{{model}} {{basis}}",
                    )
                ],
                width=24,
            ),
        ],
    )


def build(c: MixinConfig) -> Dashboard:
    """The LLM spend-and-budgets dashboard."""
    u = Units(c)
    return assemble(
        c,
        "llm",
        "Chargeback / LLM spend and budgets",
        "LLM spend and tokens per team and model, LiteLLM budget windows and forecasts, and "
        "how far self-hosted models' prices are from their serving cost, and their weights.",
        [_spend(c, u), _budgets(c, u), _pricing(c, u), _weights(c, u), token_costs_section(c, u)],
    )

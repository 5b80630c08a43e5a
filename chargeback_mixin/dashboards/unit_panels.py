"""Unit-economics sections: GPU prices and energy, cost per million tokens, build or buy."""

from __future__ import annotations

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards.lib import (
    Section,
    Units,
    columns_table,
    query,
    series,
    table_panel,
    timeseries_panel,
)

__all__ = ["gpu_prices_section", "token_costs_section"]


def gpu_prices_section(c: MixinConfig, u: Units) -> Section:
    """The GPU-hour price each model and flavor is charged at, its build, and energy per team."""
    return (
        "GPU prices and energy",
        [
            table_panel(
                "GPU-hour price applied",
                "The GPU-hour price each GPU model and Kueue flavor is charged at, and where it "
                "came from: config, price_build, opencost_charge, opencost_assets, "
                "config_models or cluster_average.",
                u.money_per_hour,
                [
                    query(
                        f"max by (kind, name, source) (chargeback_gpu_price_per_hour{c.sel()})",
                        instant=True,
                    )
                ],
                width=12,
            ),
            columns_table(
                "Price build per node",
                "A built price's parts per node and hour (capex over the available hours, "
                "energy, operations), and the watts per GPU it used (nameplate or measured).",
                u.money_per_hour,
                [
                    (
                        "Per node and hour",
                        f"max by (kind, name, part) (chargeback_gpu_price_build_per_hour{c.sel()})",
                    ),
                    (
                        "Watts per GPU",
                        f"max by (kind, name, power) (chargeback_gpu_price_build_watts{c.sel()})",
                    ),
                ],
                width=12,
            ),
            timeseries_panel(
                "GPU power by team",
                "Measured power draw of the GPUs each team holds (dcgm-exporter's "
                "DCGM_FI_DEV_POWER_USAGE).",
                "watt",
                [query(f"max by (team) (chargeback_team_gpu_power_watts{c.sel()})", "{{team}}")],
                width=6,
            ),
            timeseries_panel(
                "GPU energy by team",
                "Energy rate of each team's GPUs at the wall: measured draw x PUE.",
                "suffix: kWh/h",
                [
                    query(
                        f"max by (team) (chargeback_team_gpu_energy_kwh_per_hour{c.sel()})",
                        "{{team}}",
                    )
                ],
                width=6,
            ),
            timeseries_panel(
                "GPU energy cost by team",
                "That energy at the tariff of the GPU model's price build.",
                u.money_per_hour,
                [
                    query(
                        f"max by (team) (chargeback_team_gpu_energy_cost_per_hour{c.sel()})",
                        "{{team}}",
                    )
                ],
                width=6,
            ),
            timeseries_panel(
                "GPU emissions by team",
                "That energy times the configured grid intensity (grid_co2e_grams_per_kwh).",
                "suffix: g CO2e/h",
                [
                    query(
                        f"max by (team) (chargeback_team_gpu_co2e_grams_per_hour{c.sel()})",
                        "{{team}}",
                    )
                ],
                width=6,
            ),
        ],
    )


def token_costs_section(c: MixinConfig, u: Units) -> Section:
    """Cost per million tokens per model and per team, per request, and build or buy."""
    return (
        "Cost per million tokens, build or buy",
        [
            timeseries_panel(
                "Cost per million tokens by model",
                "Prompt plus completion tokens this month: declared is LiteLLM's spend over "
                "them; measured (self-hosted) is the model's share of its serving cost.",
                u.money,
                [
                    query(
                        f"max by (model, basis) (chargeback_llm_cost_per_million_tokens{c.sel()})",
                        "{{model}} {{basis}}",
                    )
                ],
                width=12,
            ),
            timeseries_panel(
                "What each team paid per million tokens",
                "Per team and model this month: its external spend, or its re-attributed share "
                "of the serving cost, over its tokens.",
                u.money,
                [
                    query(
                        "max by (team, model) "
                        f"(chargeback_team_llm_cost_per_million_tokens{c.sel()})",
                        "{{team}} {{model}}",
                    )
                ],
                width=12,
            ),
            timeseries_panel(
                "Cost per request by team and model",
                "The same cost over the team's requests to the model this month.",
                u.money,
                [
                    query(
                        f"max by (team, model) (chargeback_team_llm_cost_per_request{c.sel()})",
                        "{{team}} {{model}}",
                    )
                ],
                width=8,
            ),
            timeseries_panel(
                "Bought instead: cost this month",
                "What each team's tokens to a self-hosted model would have cost at the model's "
                "declared alternative (an API's list prices, or a model behind the proxy).",
                u.money,
                [
                    query(
                        "max by (team, model) "
                        f"(chargeback_team_llm_alternative_cost_month_to_date{c.sel()})",
                        "{{team}} {{model}}",
                    )
                ],
                width=8,
            ),
            timeseries_panel(
                "Break-even",
                "Serving cost over the alternative's (the multiple of today's volume at which "
                "self-hosting breaks even; below 100% it is already cheaper), and the GPU "
                "utilisation of the serving namespace at which it would.",
                u.ratio,
                series(
                    (
                        f"max by (model) (chargeback_llm_break_even_ratio{c.sel()})",
                        "{{model}} volume",
                    ),
                    (
                        f"max by (model) (chargeback_llm_break_even_utilization_ratio{c.sel()})",
                        "{{model}} utilisation",
                    ),
                ),
                width=8,
            ),
        ],
    )

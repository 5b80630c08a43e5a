"""Dashboard `chargeback-dimensions`: cost by a configured dimension (product, environment, ...)."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from chargeback_mixin.config import MixinConfig
from chargeback_mixin.dashboards.lib import (
    Section,
    Units,
    assemble,
    label_var,
    query,
    stat_panel,
    table_panel,
    timeseries_panel,
)

__all__ = ["build"]

DIMENSION = 'dimension="$dimension"'
PER_HOUR = "chargeback_dimension_cost_per_hour"
MONTH = "chargeback_dimension_cost_month_to_date"


def _values(c: MixinConfig, u: Units) -> Section:
    def by(metric: str, *labels: str) -> str:
        return f"sum {c.by('value', *labels)} ({metric}{c.sel(DIMENSION)})"

    return (
        "By value",
        [
            stat_panel(
                "Month to date by value",
                "Each value's cost since the month began; the values add up to the same total "
                "as the teams. Shared namespaces are in it as the component `shared`.",
                u.money,
                [query(by(MONTH), "{{value}}", instant=True)],
                width=16,
            ),
            stat_panel(
                "Values folded into __other__",
                "Distinct values beyond the dimension's max_values whose cost was folded into "
                "__other__; raise max_values or fix the labels when it is not 0.",
                u.count,
                [
                    query(
                        f"max {c.by()} (chargeback_dimension_values_over_cap{c.sel(DIMENSION)})",
                        instant=True,
                    )
                ],
                width=8,
            ),
            timeseries_panel(
                "Cost per hour by value",
                "The current cost rate of each value of the dimension, every component "
                "together (__unallocated__: no configured key named one).",
                u.money_per_hour,
                [query(by(PER_HOUR), "{{value}}")],
            ),
            table_panel(
                "Month to date by value and component",
                "Each value's month to date per component, as `report --by` prints it.",
                u.money,
                [query(by(MONTH, "component"), instant=True)],
                height=10,
            ),
        ],
    )


def build(c: MixinConfig) -> Dashboard:
    """The dimension dashboard."""
    u = Units(c)
    return assemble(
        c,
        "dimensions",
        "Chargeback / Dimensions",
        "Cost by a configured dimension beyond the team (product, environment, cost centre): "
        "each dimension adds up to the same cluster total as the teams.",
        [_values(c, u)],
        [label_var(c, "dimension", PER_HOUR, label="Dimension")],
    )

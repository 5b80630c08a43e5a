"""Dimension families: the ledger split by each configured dimension beyond the team."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

# Dimensions beyond the team (config `dimensions`), each summing to the same cluster total.
DIMENSION_COST_PER_HOUR = family(
    "dimension_cost_per_hour",
    G,
    "Current cost rate per configured dimension, value and component, in the configured "
    "currency per hour; each dimension sums to the team split's total.",
    ("dimension", "value", "component"),
    "currency/h",
    "opencost",
)

DIMENSION_COST_MONTH_TO_DATE = family(
    "dimension_cost_month_to_date",
    G,
    "Cost per configured dimension, value and component since the start of the calendar "
    "month, in the configured currency.",
    ("dimension", "value", "component"),
    "currency",
    "opencost",
)

DIMENSION_VALUES_OVER_CAP = family(
    "dimension_values_over_cap",
    G,
    "Distinct values of a dimension beyond its max_values whose cost was folded into __other__.",
    ("dimension",),
    "values",
    "opencost",
)

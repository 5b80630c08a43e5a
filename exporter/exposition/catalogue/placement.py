"""Placement families: fallback-placed cost, the labelling backlog, caps and dimensions."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

__all__ = [
    "ATTRIBUTION_FALLBACK_COST_PER_HOUR",
    "DIMENSION_COST_MONTH_TO_DATE",
    "DIMENSION_COST_PER_HOUR",
    "DIMENSION_VALUES_OVER_CAP",
    "LABELLING_BACKLOG_COST_MONTH_TO_DATE",
    "TEAMS_OVER_CAP",
]

ATTRIBUTION_FALLBACK_COST_PER_HOUR = family(
    "attribution_fallback_cost_per_hour",
    G,
    "Cost rate placed on a team only through a fallback label key, per team and key.",
    ("team", "key"),
    "currency/h",
    "opencost",
)

LABELLING_BACKLOG_COST_MONTH_TO_DATE = family(
    "labelling_backlog_cost_month_to_date",
    G,
    "Month-to-date cost of the largest unallocated (kind unallocated) and fallback-placed (kind "
    "fallback) workloads, before any idle policy; 20 per kind, the rest in one __other__ row.",
    ("kind", "namespace", "workload", "team", "key"),
    "currency",
    "opencost",
)

TEAMS_OVER_CAP = family(
    "teams_over_cap",
    G,
    "Distinct teams beyond attribution.max_teams whose cost was folded into __other__.",
    (),
    "teams",
    "opencost",
)

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

"""Team cost families: cost rates and month to date, budgets, fallback-placed and unlabelled."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

TEAM_COST_PER_HOUR = family(
    "team_cost_per_hour",
    G,
    "Current cost rate per team and component, in the configured currency per hour.",
    ("team", "component"),
    "currency/h",
    "opencost",
)

TEAM_COST_MONTH_TO_DATE = family(
    "team_cost_month_to_date",
    G,
    "Cost per team and component since the start of the calendar month in the configured time "
    "zone, in the configured currency.",
    ("team", "component"),
    "currency",
    "opencost",
)

TEAM_BUDGET = family(
    "team_budget",
    G,
    "Monthly budget per team and kind (gpu, llm), in the configured currency.",
    ("team", "kind"),
    "currency",
    "config",
)

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

"""Cost families: the team's and the cluster's cost rates and month-to-date totals."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

__all__ = [
    "CLUSTER_COST_PER_HOUR",
    "CLUSTER_IDLE_COST_MONTH_TO_DATE",
    "CLUSTER_IDLE_COST_PER_HOUR",
    "CLUSTER_RESOURCE_COST_PER_HOUR",
    "COMPONENTS",
    "MONTH_END_TIMESTAMP_SECONDS",
    "MONTH_START_TIMESTAMP_SECONDS",
    "TEAM_BUDGET",
    "TEAM_COST_MONTH_TO_DATE",
    "TEAM_COST_PER_HOUR",
]

# Cost components, in the order the report prints them.
COMPONENTS: tuple[str, ...] = (
    "gpu",
    "cpu",
    "ram",
    "storage",
    "network",
    "other",
    "idle_share",
    "borrowed",
    "lent",
    "shared",
    "llm_serving",
    "llm_external",
)

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

CLUSTER_COST_PER_HOUR = family(
    "cluster_cost_per_hour",
    G,
    "Cost rate of the whole cluster (allocations plus idle) as OpenCost reports it, before any "
    "policy.",
    (),
    "currency/h",
    "opencost",
)

CLUSTER_RESOURCE_COST_PER_HOUR = family(
    "cluster_resource_cost_per_hour",
    G,
    "Cost rate of the whole cluster per resource (gpu, cpu, ram): allocations plus idle, as "
    "OpenCost reports it, before any policy.",
    ("resource",),
    "currency/h",
    "opencost",
)

CLUSTER_IDLE_COST_PER_HOUR = family(
    "cluster_idle_cost_per_hour",
    G,
    "Cost rate of idle capacity per resource (gpu, cpu, ram), as OpenCost reports it, before "
    "any idle policy shares it out.",
    ("resource",),
    "currency/h",
    "opencost",
)

CLUSTER_IDLE_COST_MONTH_TO_DATE = family(
    "cluster_idle_cost_month_to_date",
    G,
    "Cost of idle capacity per resource (gpu, cpu, ram) since the start of the calendar month "
    "in the configured time zone, before any idle policy shares it out.",
    ("resource",),
    "currency",
    "opencost",
)

# The month the month-to-date totals cover, so rules can forecast in the configured zone.
MONTH_START_TIMESTAMP_SECONDS = family(
    "month_start_timestamp_seconds",
    G,
    "Unix time of the start of the current calendar month in the configured time zone.",
    (),
    "seconds",
    "config",
)

MONTH_END_TIMESTAMP_SECONDS = family(
    "month_end_timestamp_seconds",
    G,
    "Unix time of the start of the next calendar month in the configured time zone (the end "
    "of the current one).",
    (),
    "seconds",
    "config",
)

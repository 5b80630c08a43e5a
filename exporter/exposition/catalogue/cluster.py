"""Cluster families: its cost and idle per resource before any policy, teams over the cap."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

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

TEAMS_OVER_CAP = family(
    "teams_over_cap",
    G,
    "Distinct teams beyond attribution.max_teams whose cost was folded into __other__.",
    (),
    "teams",
    "opencost",
)

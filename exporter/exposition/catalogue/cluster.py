"""Cluster families: its cost and idle per resource before any policy, teams over the cap."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

CLUSTER_COST_PER_HOUR = family(
    "cluster_cost_per_hour",
    G,
    "Cost rate of the whole cluster (allocations plus idle) as OpenCost reports it, each "
    "GPU-hour at the GPU price applied, before any policy.",
    (),
    "currency/h",
    "opencost",
)

CLUSTER_RESOURCE_COST_PER_HOUR = family(
    "cluster_resource_cost_per_hour",
    G,
    "Cost rate of the whole cluster per resource (gpu, cpu, ram): allocations plus idle, as "
    "OpenCost reports it (each GPU-hour at the GPU price applied), before any policy.",
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

CLUSTER_GPU_PRICE_DIFFERENCE_PER_HOUR = family(
    "cluster_gpu_price_difference_per_hour",
    G,
    "The cluster's GPU cost rate (used and idle GPU-hours) at the GPU prices applied, minus what "
    "OpenCost itself charged for them; 0 when no configured or built price governs.",
    (),
    "currency/h",
    "opencost",
)

CLUSTER_GPU_PRICE_DIFFERENCE_MONTH_TO_DATE = family(
    "cluster_gpu_price_difference_month_to_date",
    G,
    "The month's GPU cost (used and idle GPU-hours) at the GPU prices applied, minus what "
    "OpenCost itself charged for them, since the start of the calendar month.",
    (),
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

"""GPU families, from DCGM: GPUs by state, utilisation and the cost of idle GPUs."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

GPUS = family(
    "gpus",
    G,
    "GPUs per team and state: busy, idle (allocated but below the utilisation threshold) or "
    "unallocated (no pod). MIG slices count as their share of a GPU.",
    ("team", "state"),
    "gpus",
    "dcgm",
)

TEAM_GPU_UTILIZATION_RATIO = family(
    "team_gpu_utilization_ratio",
    G,
    "Mean DCGM utilisation (0..1) of the team's GPUs.",
    ("team",),
    "ratio",
    "dcgm",
)

TEAM_GPU_WASTE_COST_PER_HOUR = family(
    "team_gpu_waste_cost_per_hour",
    G,
    "Cost rate of GPUs a team holds but leaves idle.",
    ("team",),
    "currency/h",
    "dcgm",
    inputs=("opencost",),
)

# In GPU-seconds, Prometheus' base unit (3,600 per GPU-hour): `promtool check metrics` rejects
# `hours` in a name. Until release 0.2 it was chargeback_team_gpu_idle_hours_month_to_date.
TEAM_GPU_IDLE_SECONDS_MONTH_TO_DATE = family(
    "team_gpu_idle_seconds_month_to_date",
    G,
    "GPU-seconds the team's pods held GPUs below the idle threshold since the start of the "
    "calendar month (3,600 per GPU-hour; MIG slices as their share, time-sliced GPUs split among "
    "their pods). Only with sources.dcgm.prometheus: listed urls and discovery have no history, "
    "so it is absent.",
    ("team",),
    "gpu-seconds",
    "dcgm",
)

TEAM_GPU_WASTE_COST_MONTH_TO_DATE = family(
    "team_gpu_waste_cost_month_to_date",
    G,
    "Cost of the month's idle GPU-hours: each at its GPU model's current GPU-hour price. Absent "
    "without sources.dcgm.prometheus, and for a team with an idle GPU model nothing prices.",
    ("team",),
    "currency",
    "dcgm",
    inputs=("opencost",),
)

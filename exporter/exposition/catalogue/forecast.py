"""Forecast families: where the month will end, with an interval (docs/forecast.md)."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

_HOW = (
    "bound mid is the month to date plus the days left at the run rate (blended with last "
    "month's while the month is young), low and high a 90 % interval from the spread of whole "
    "days; in the configured currency."
)

CLUSTER_COST_FORECAST_MONTH_END = family(
    "cluster_cost_forecast_month_end",
    G,
    f"Forecast of the whole cluster's cost at the end of the calendar month: {_HOW}",
    ("bound",),
    "currency",
    "opencost",
)

TEAM_COST_FORECAST_MONTH_END = family(
    "team_cost_forecast_month_end",
    G,
    "Forecast of a team's cost at the end of the calendar month (every component; the teams' "
    f"mid sums to the cluster's): {_HOW}",
    ("team", "bound"),
    "currency",
    "opencost",
)

TEAM_KIND_COST_FORECAST_MONTH_END = family(
    "team_kind_cost_forecast_month_end",
    G,
    "Forecast of a team's cost at the end of the calendar month per budget kind (llm: the "
    f"llm_external component; gpu: every other), as the budget alerts read it: {_HOW}",
    ("team", "kind", "bound"),
    "currency",
    "opencost",
)

DIMENSION_COST_FORECAST_MONTH_END = family(
    "dimension_cost_forecast_month_end",
    G,
    "Forecast of a configured dimension value's cost at the end of the calendar month (the "
    f"values' mid sums to the cluster's): {_HOW}",
    ("dimension", "value", "bound"),
    "currency",
    "opencost",
)

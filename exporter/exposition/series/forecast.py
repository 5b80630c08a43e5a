"""Forecast series: the month's end per cluster, team, budget kind and dimension value."""

from __future__ import annotations

from collections.abc import Iterator

from exporter.exposition.catalogue.forecast import (
    CLUSTER_COST_FORECAST_MONTH_END,
    DIMENSION_COST_FORECAST_MONTH_END,
    TEAM_COST_FORECAST_MONTH_END,
    TEAM_KIND_COST_FORECAST_MONTH_END,
)
from exporter.exposition.samples import Sample
from exporter.ledger.forecast import Bounds, MonthForecast
from exporter.ledger.result import Chargeback

__all__ = ["forecast_samples", "series"]


def series(chargeback: Chargeback) -> list[Sample]:
    """The forecast's series; none when the join has no forecast."""
    found = chargeback.forecast
    return list(forecast_samples(found)) if found is not None else []


def forecast_samples(found: MonthForecast) -> Iterator[Sample]:
    """Each figure's low, mid and high, as a `bound` label."""
    for bound, value in _bounds(found.cluster):
        yield Sample.of(CLUSTER_COST_FORECAST_MONTH_END, value, bound=bound)
    for team, bounds in sorted(found.teams.items()):
        for bound, value in _bounds(bounds):
            yield Sample.of(TEAM_COST_FORECAST_MONTH_END, value, team=team, bound=bound)
    for (team, kind), bounds in sorted(found.kinds.items()):
        for bound, value in _bounds(bounds):
            yield Sample.of(
                TEAM_KIND_COST_FORECAST_MONTH_END, value, team=team, kind=kind, bound=bound
            )
    for (name, value_of), bounds in sorted(found.dimensions.items()):
        for bound, value in _bounds(bounds):
            # Built directly: the label `value` would clash with Sample.of's argument.
            labels = (("dimension", name), ("value", value_of), ("bound", bound))
            yield Sample(DIMENSION_COST_FORECAST_MONTH_END, labels, value)


def _bounds(bounds: Bounds) -> tuple[tuple[str, float], ...]:
    return (("low", bounds.low), ("mid", bounds.mid), ("high", bounds.high))

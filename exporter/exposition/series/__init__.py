"""The chargeback as series: each catalogue area's samples, built from the typed result."""

from __future__ import annotations

from exporter.exposition.samples import Sample
from exporter.exposition.series import (
    advice,
    bills,
    calendar,
    cluster,
    costs,
    dimensions,
    forecast,
    gpus,
    llm,
    queues,
    quota,
    unit_economics,
)
from exporter.exposition.series.areas import Area, SeriesMemo
from exporter.ledger.result import Chargeback

__all__ = ["AREAS", "Area", "SeriesMemo", "series"]

_UNIT_PRICES = (
    *("units.prices", "units.opencost_prices", "units.builds"),
    *("units.energy", "units.break_even"),
)
# Every area, and the parts of the result each reads (docs/performance.md, "Adding a family"):
# a rebuild with a SeriesMemo builds again only the areas whose parts changed.
AREAS: tuple[Area, ...] = (
    Area("costs", costs.series, ("hourly", "month", "budgets", "backlog")),
    Area("cluster", cluster.series, ("cluster", "folded_teams")),
    Area("dimensions", dimensions.series, ("dimensions",)),
    Area("calendar", calendar.series, ("period",)),
    Area("gpus", gpus.series, ("gpus",)),
    Area("quota", quota.series, ("quota",)),
    Area("llm", llm.series, ("llm", "weights", "period")),
    Area(
        "unit_prices",
        unit_economics.price_series,
        _UNIT_PRICES,
    ),
    Area(
        "unit_models",
        unit_economics.model_series,
        ("units.models", "units.teams", "units.alternatives", "llm.folded_models"),
    ),
    Area("advice", advice.series, ("advice",)),
    Area("forecast", forecast.series, ("forecast",)),
    Area("queues", queues.series, ("queues",)),
    Area("bills", bills.series, ("reconciliation",)),
)


def series(chargeback: Chargeback, memo: SeriesMemo | None = None) -> list[Sample]:
    """Every series of one join, area by area (the renderer orders them by the catalogue).

    With a `memo` (a caller that joins again and again), an area whose parts of the result are
    equal to the last join's keeps its samples; the samples are equal to those without one.
    """
    built = (memo or SeriesMemo()).build(AREAS, chargeback)
    return [sample for samples in built for sample in samples]

"""Dimension series: the ledger split by each configured dimension, and the values folded."""

from __future__ import annotations

from collections.abc import Iterable

from exporter.exposition.catalogue.dimensions import (
    DIMENSION_COST_MONTH_TO_DATE,
    DIMENSION_COST_PER_HOUR,
    DIMENSION_VALUES_OVER_CAP,
)
from exporter.exposition.samples import Sample
from exporter.ledger.dimensions.beyond_team import DimensionSplit
from exporter.ledger.result import Chargeback

__all__ = ["dimension_samples", "series"]


def series(chargeback: Chargeback) -> list[Sample]:
    """Every dimension's series."""
    return list(dimension_samples(chargeback.dimensions))


def dimension_samples(splits: Iterable[DimensionSplit]) -> Iterable[Sample]:
    """The dimension families: hourly, month to date, and how many values were folded."""
    for split in splits:
        name = split.name
        for family, costs in (
            (DIMENSION_COST_PER_HOUR, split.hourly.costs),
            (DIMENSION_COST_MONTH_TO_DATE, split.month.costs),
        ):
            for (value, component), amount in sorted(costs.items()):
                # Built directly: the label `value` would clash with Sample.of's argument.
                labels = (("dimension", name), ("value", value), ("component", component))
                yield Sample(family, labels, amount)
        yield Sample.of(DIMENSION_VALUES_OVER_CAP, float(len(split.folded)), dimension=name)

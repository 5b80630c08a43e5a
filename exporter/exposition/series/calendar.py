"""Calendar series: the bounds of the month the month-to-date totals cover."""

from __future__ import annotations

from collections.abc import Iterable

from exporter.calendar import Month
from exporter.exposition.catalogue.calendar import (
    MONTH_END_TIMESTAMP_SECONDS,
    MONTH_START_TIMESTAMP_SECONDS,
)
from exporter.exposition.samples import Sample
from exporter.ledger.result import Chargeback

__all__ = ["month_samples", "series"]


def series(chargeback: Chargeback) -> list[Sample]:
    """The joined month's bounds."""
    return list(month_samples(chargeback.period))


def month_samples(month: Month) -> Iterable[Sample]:
    """The bounds of the calendar month, as Unix times.

    Prometheus only knows UTC calendars; with these a rule counts the hours left in the
    exporter's own month (`end - time()`), whatever the zone and its daylight-saving changes.
    """
    yield Sample.of(MONTH_START_TIMESTAMP_SECONDS, month.start.timestamp())
    yield Sample.of(MONTH_END_TIMESTAMP_SECONDS, month.end.timestamp())

"""Scripted sources and a one-family build for the refresher's unit tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from exporter.exposition.catalogue.costs import TEAM_BUDGET
from exporter.exposition.samples import Sample
from exporter.serve.schedule import Source

__all__ = ["as_budgets", "scripted"]


def scripted(name: str, result: Sequence[object]) -> Source:
    """A source whose fetch returns (or raises) `result[0]`, which a test may swap between reads."""

    def fetch(now: datetime) -> object:
        value = result[0]
        if isinstance(value, Exception):
            raise value
        return value

    return Source(name, interval=0.05, max_staleness=60, fetch=fetch)


def as_budgets(records: Mapping[str, object], now: datetime) -> Iterable[Sample]:
    """Each source's record as one team's GPU budget, named after the source."""
    for name, value in sorted(records.items()):
        yield Sample.of(TEAM_BUDGET, float(value), team=name, kind="gpu")  # type: ignore[arg-type]

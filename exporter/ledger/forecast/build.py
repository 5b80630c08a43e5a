"""The forecast of a joined month: its figures by key, the book's days, one method (pure)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

from exporter.calendar import Month
from exporter.ledger.costs.components import Component
from exporter.ledger.forecast.daybook import DayBook, Key
from exporter.ledger.forecast.figures import GPU_KIND, LLM_KIND, MonthForecast
from exporter.ledger.forecast.method import Bounds, Span, forecast
from exporter.ledger.result import Chargeback

__all__ = ["CLUSTER", "figures_of", "noted", "span_of", "today_of", "with_forecast"]

CLUSTER: Key = ("cluster",)


def figures_of(chargeback: Chargeback) -> dict[Key, float]:
    """The month to date of every figure the forecast covers; empty without OpenCost."""
    if chargeback.month is None:
        return {}
    out: dict[Key, float] = defaultdict(float)
    for (team, component), amount in sorted(chargeback.month.costs.items()):
        kind = LLM_KIND if component == Component.LLM_EXTERNAL else GPU_KIND
        out[("team", team)] += amount
        out[("kind", team, kind)] += amount
        out[CLUSTER] += amount
    for split in chargeback.dimensions:
        for value, amount in split.month.by_value().items():
            out[("dimension", split.name, value)] += amount
    return dict(out)


def today_of(month: Month, until: datetime) -> int:
    """The index of the local day that holds `until` (the last day once the month is over)."""
    days = month.days()
    for index, (start, end) in enumerate(days):
        if start <= until < end:
            return index
    return len(days) - 1


def span_of(month: Month, until: datetime) -> Span:
    """Days elapsed up to `until` (today's fraction in real hours) of the month's days."""
    days = month.days()
    if until >= month.end:
        return Span(float(len(days)), float(len(days)))
    index = today_of(month, until)
    start, end = days[index]
    fraction = (until.timestamp() - start.timestamp()) / (end.timestamp() - start.timestamp())
    return Span(index + fraction, float(len(days)))


def with_forecast(chargeback: Chargeback, book: DayBook | None = None) -> Chargeback:
    """The chargeback with its month-end forecast (None without OpenCost's month)."""
    figures = figures_of(chargeback)
    if not figures:
        return chargeback
    reading = chargeback.reading
    span = span_of(reading.month, reading.until)
    today = today_of(reading.month, reading.until)
    if book is None or book.current is None or book.current.month != reading.month:
        book = DayBook()  # a book of another month knows none of this one's days
    keys = set(figures)
    if book.last is not None and span.weight < 1:
        # A figure of last month's that has none yet this month still has its prior.
        keys |= {k for seen in book.last.seen.values() for k in seen}
    bounds = {
        key: forecast(figures.get(key, 0.0), book.whole_days(key, today), span, book.prior(key))
        for key in sorted(keys)
    }
    result = _typed(bounds, span, len(book.whole_days(CLUSTER, today)), book.last is not None)
    return replace(chargeback, forecast=result)


def noted(book: DayBook, chargeback: Chargeback) -> tuple[DayBook, Chargeback]:
    """A server's step: write the join's month to date in the book (in the local day of its
    instant), then forecast from the book; both returned."""
    figures = figures_of(chargeback)
    if figures:
        month = chargeback.period
        book = book.noted(month, today_of(month, chargeback.at), figures)
    return book, with_forecast(chargeback, book)


def _typed(bounds: Mapping[Key, Bounds], span: Span, whole_days: int, prior: bool) -> MonthForecast:
    return MonthForecast(
        elapsed_days=span.elapsed,
        length_days=span.length,
        whole_days=whole_days,
        prior=prior and span.weight < 1,
        cluster=bounds[CLUSTER],
        teams={k[1]: b for k, b in bounds.items() if k[0] == "team"},
        kinds={(k[1], k[2]): b for k, b in bounds.items() if k[0] == "kind"},
        dimensions={(k[1], k[2]): b for k, b in bounds.items() if k[0] == "dimension"},
    )

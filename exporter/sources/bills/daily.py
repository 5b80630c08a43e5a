"""A provider's cost API read as daily buckets: the paging, bucket checks and lines both share.

OpenAI's costs and Anthropic's cost report answer alike: pages of buckets, each a UTC day with
a list of results. Only the query, the names of a bucket's bounds and how a result becomes a
line differ, so each provider's module says those and this reads the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import httpx

from exporter.errors import UpstreamStatusError
from exporter.sources.bills.admin import bucket_day, explained, pages
from exporter.sources.bills.lines import BilledLine, BillKind, BillSnapshot
from exporter.sources.bills.settings import BillShared, BillWindow, confirm_held
from exporter.sources.checks import MISSING_FIELD, BadRecord, Tally, refuse_dropped

__all__ = ["DailyApi", "read_daily"]

LineOf = Callable[[Any, date, BillShared], BilledLine]


@dataclass(frozen=True)
class DailyApi:
    """What differs between the providers: where to ask, what, and how a result reads."""

    path: str
    query: Sequence[tuple[str, str]]
    bounds: tuple[str, str]  # a bucket's start and end keys
    line_of: LineOf  # a result as a line; raises BadRecord


def read_daily(
    client: httpx.Client,
    api: DailyApi,
    shared: BillShared,
    window: BillWindow,
    scopes: Sequence[str],
) -> BillSnapshot:
    """The month's bill to date from every page; a dropped record refuses the read."""
    tally = Tally()
    lines: list[BilledLine] = []
    days: set[date] = set()
    try:
        for page in pages(client, shared.source, api.path, list(api.query)):
            for bucket in page["data"]:
                found = _bucket(bucket, api, shared, window, tally)
                if found is None:
                    continue
                day, billed = found
                lines.extend(b for b in billed if not scopes or b.scope in scopes)
                if window.closed(day):
                    days.add(day)
    except UpstreamStatusError as exc:
        raise explained(exc, shared.source) from None
    refuse_dropped(shared.source, tally, "cost results")
    confirm_held(client, shared, window, bool(lines))
    return BillSnapshot(
        source=shared.name,
        kind=BillKind.LLM,
        lines=tuple(lines),
        days_billed=frozenset(days),
        dropped=sum(tally.values()),
    )


def _bucket(
    bucket: Any, api: DailyApi, shared: BillShared, window: BillWindow, tally: Tally
) -> tuple[date, list[BilledLine]] | None:
    """A bucket's day and lines; None (counted) when the bucket is not a day of the month."""
    try:
        if not isinstance(bucket, dict):
            raise BadRecord(MISSING_FIELD, "a bucket is not an object")
        start, end = api.bounds
        day = bucket_day(bucket.get(start), bucket.get(end), window, "bucket")
        results = bucket.get("results")
        if not isinstance(results, list):
            raise BadRecord(MISSING_FIELD, f"bucket {day}: results is not a list")
    except BadRecord as exc:
        tally.drop(exc)
        return None
    lines = []
    for result in results:
        try:
            line = api.line_of(result, day, shared)
        except BadRecord as exc:
            tally.drop(exc)
            continue
        if line.amount:
            lines.append(line)
    return day, lines

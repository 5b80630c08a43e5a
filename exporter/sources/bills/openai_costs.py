"""OpenAI's organization costs: what OpenAI billed per UTC day, line item and project.

`GET /v1/organization/costs?start_time&end_time&bucket_width=1d&group_by[]=line_item&
group_by[]=project_id&limit=31[&project_ids[]=...][&page=<next_page>]` with an admin key
(`Authorization: Bearer`), answering daily buckets `{start_time, end_time, results}` (unix
seconds) whose results carry `amount: {value, currency}` in currency units (a lower-case ISO 4217
code), `line_item` (`"<model>, <usage>"`) and `project_id` (docs/sources/openai-costs.md).
A result with a bad amount or a bucket outside the month is dropped and counted, and fails the
read: the month's bill would be short without it.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx

from exporter.config.bills import OpenAICostsConfig
from exporter.errors import UpstreamStatusError
from exporter.sources.bills.admin import admin_client, amount, bucket_day, explained, pages
from exporter.sources.bills.lines import BilledLine, BillKind, BillSnapshot
from exporter.sources.bills.settings import BillShared, BillWindow, confirm_held, window_of
from exporter.sources.checks import MISSING_FIELD, BadRecord, Tally, label, refuse_dropped
from exporter.sources.reading import Reading

__all__ = ["PATH", "build_client", "fetch", "model_of"]

PATH = "/v1/organization/costs"
_PROVIDER = "openai"


def build_client(
    cfg: OpenAICostsConfig, *, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    """The client for OpenAI's admin endpoints, the admin key as a Bearer token."""
    return admin_client(cfg, "Authorization", "Bearer {key}", transport=transport)


def fetch(
    client: httpx.Client, cfg: OpenAICostsConfig, shared: BillShared, reading: Reading
) -> BillSnapshot:
    """The month's bill to date, one line per day, line item and project."""
    window, tally = window_of(reading), Tally()
    lines: list[BilledLine] = []
    days: set[date] = set()
    try:
        for page in pages(client, shared.source, PATH, _query(cfg, window)):
            for bucket in page["data"]:
                found = _bucket(bucket, cfg, shared, window, tally)
                if found is not None:
                    day, billed = found
                    lines.extend(billed)
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


def _query(cfg: OpenAICostsConfig, window: BillWindow) -> list[tuple[str, str]]:
    query = [
        ("start_time", str(int(window.start.timestamp()))),
        ("end_time", str(int(window.end.timestamp()))),
        ("bucket_width", "1d"),
        ("group_by[]", "line_item"),
        ("group_by[]", "project_id"),
        ("limit", "31"),
    ]
    return query + [("project_ids[]", scope) for scope in cfg.scopes]


def _bucket(
    bucket: Any, cfg: OpenAICostsConfig, shared: BillShared, window: BillWindow, tally: Tally
) -> tuple[date, list[BilledLine]] | None:
    """A bucket's day and lines; None (counted) when the bucket is not a day of the month."""
    try:
        if not isinstance(bucket, dict):
            raise BadRecord(MISSING_FIELD, "a bucket is not an object")
        day = bucket_day(bucket.get("start_time"), bucket.get("end_time"), window, "bucket")
        results = bucket.get("results")
        if not isinstance(results, list):
            raise BadRecord(MISSING_FIELD, f"bucket {day}: results is not a list")
    except BadRecord as exc:
        tally.drop(exc)
        return None
    lines = []
    for result in results:
        try:
            line = _line(result, day, shared)
        except BadRecord as exc:
            tally.drop(exc)
            continue
        if line.amount and (not cfg.scopes or line.scope in cfg.scopes):
            lines.append(line)
    return day, lines


def _line(result: Any, day: date, shared: BillShared) -> BilledLine:
    if not isinstance(result, dict):
        raise BadRecord(MISSING_FIELD, f"{day}: a result is not an object")
    money = result.get("amount")
    if not isinstance(money, dict):
        raise BadRecord(MISSING_FIELD, f"{day}: a result has no amount")
    currency = label(money.get("currency"), f"{day}: amount.currency")
    item = result.get("line_item")
    project = result.get("project_id")
    return BilledLine(
        source=shared.name,
        provider=_PROVIDER,
        kind=BillKind.LLM,
        day=day,
        amount=amount(money.get("value"), f"{day}: amount.value"),
        currency=shared.currency_of(currency),
        model=model_of(label(item, f"{day}: line_item")) if item is not None else None,
        scope=label(project, f"{day}: project_id") if project is not None else None,
        description=item if isinstance(item, str) else "",
    )


def model_of(line_item: str) -> str:
    """The model a line item bills: `"gpt-4o-2024-08-06, input"` names `gpt-4o-2024-08-06`;
    a line item without a usage part (`"Image models"`) is its own name."""
    return line_item.partition(",")[0].strip()

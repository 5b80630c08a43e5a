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
from exporter.sources.bills.admin import admin_client, amount
from exporter.sources.bills.daily import DailyApi, read_daily
from exporter.sources.bills.lines import BilledLine, BillKind, BillSnapshot
from exporter.sources.bills.settings import BillShared, BillWindow, window_of
from exporter.sources.checks import MISSING_FIELD, BadRecord, label
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
    window = window_of(reading)
    api = DailyApi(PATH, _query(cfg, window), ("start_time", "end_time"), _line)
    return read_daily(client, api, shared, window, cfg.scopes)


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

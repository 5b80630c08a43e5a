"""Anthropic's Admin API cost report: what Anthropic billed per UTC day, workspace and item.

`GET /v1/organizations/cost_report?starting_at&ending_at&bucket_width=1d&group_by[]=workspace_id&
group_by[]=description&limit=31[&page=<next_page>]` with `x-api-key: <admin key>` and
`anthropic-version: 2023-06-01`, answering daily buckets `{starting_at, ending_at, results}`
(RFC 3339) whose results carry `amount` as a decimal STRING in the currency's lowest unit
(cents: `"123.45"` is 1.2345 USD), `currency`, `workspace_id` (null: the default workspace),
`description`, `model`, `cost_type` and `token_type` (docs/sources/anthropic-costs.md).
A result with a bad amount or a bucket outside the month is dropped and counted, and fails the
read: the month's bill would be short without it.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx

from exporter.config.bills import AnthropicCostsConfig
from exporter.sources.bills.admin import admin_client, amount
from exporter.sources.bills.daily import DailyApi, read_daily
from exporter.sources.bills.lines import BilledLine, BillKind, BillSnapshot
from exporter.sources.bills.settings import BillShared, BillWindow, window_of
from exporter.sources.checks import MISSING_FIELD, BadRecord, label
from exporter.sources.reading import Reading

__all__ = ["API_VERSION", "DEFAULT_WORKSPACE", "PATH", "build_client", "fetch"]

PATH = "/v1/organizations/cost_report"
API_VERSION = "2023-06-01"
# The default workspace has no id: the report says null, the config and the lines say this.
DEFAULT_WORKSPACE = "default"
_PROVIDER = "anthropic"
_CENTS = 100


def build_client(
    cfg: AnthropicCostsConfig, *, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    """The client for Anthropic's Admin API, the admin key in `x-api-key`."""
    version = {"anthropic-version": API_VERSION}
    return admin_client(cfg, "x-api-key", "{key}", version, transport=transport)


def fetch(
    client: httpx.Client, cfg: AnthropicCostsConfig, shared: BillShared, reading: Reading
) -> BillSnapshot:
    """The month's bill to date, one line per day, workspace and cost item."""
    window = window_of(reading)
    api = DailyApi(PATH, _query(window), ("starting_at", "ending_at"), _line)
    return read_daily(client, api, shared, window, cfg.scopes)


def _query(window: BillWindow) -> list[tuple[str, str]]:
    return [
        ("starting_at", window.start.strftime("%Y-%m-%dT%H:%M:%SZ")),
        ("ending_at", window.end.strftime("%Y-%m-%dT%H:%M:%SZ")),
        ("bucket_width", "1d"),
        ("group_by[]", "workspace_id"),
        ("group_by[]", "description"),
        ("limit", "31"),
    ]


def _line(result: Any, day: date, shared: BillShared) -> BilledLine:
    if not isinstance(result, dict):
        raise BadRecord(MISSING_FIELD, f"{day}: a result is not an object")
    currency = label(result.get("currency"), f"{day}: currency")
    workspace, model = result.get("workspace_id"), result.get("model")
    description = result.get("description")
    return BilledLine(
        source=shared.name,
        provider=_PROVIDER,
        kind=BillKind.LLM,
        day=day,
        amount=amount(result.get("amount"), f"{day}: amount", scale=_CENTS),
        currency=shared.currency_of(currency),
        model=label(model, f"{day}: model") if model is not None else None,
        scope=DEFAULT_WORKSPACE if workspace is None else label(workspace, f"{day}: workspace_id"),
        description=label(description, f"{day}: description") if description else "",
    )

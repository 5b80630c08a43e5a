"""A fake of OpenAI's organization costs API (`GET /v1/organization/costs`), admin key only.

Speaks the API as its reference writes it (docs/sources/openai-costs.md): `start_time`
(required) and `end_time` in unix seconds, `bucket_width=1d`, `group_by[]` of `line_item` and
`project_id`, `project_ids[]`, `limit` (1 to 180, 7 by default) buckets a page and an opaque
`page` cursor from the last page's `next_page`; amounts `{value, currency: "usd"}` in dollars.
The figures are chargeback_demo.fake_bills'.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from chargeback_demo.cluster import Cluster
from chargeback_demo.fake_bills import OPENAI_PROJECT, openai_items
from chargeback_demo.httpfake import FakeRequest, FakeResponse, json_response
from exporter.clock import Clock

__all__ = ["PATH", "make_handler"]

PATH = "/v1/organization/costs"
DAY = timedelta(days=1)
Handler = Callable[[FakeRequest], FakeResponse]


def make_handler(cluster: Cluster, clock: Clock, *, admin_key: str) -> Handler:
    """A request handler for the costs endpoint, answering for the demo cluster."""

    def handle(request: FakeRequest) -> FakeResponse:
        if request.path != PATH or request.method != "GET":
            return _error(404, f"Invalid URL (GET {request.path})", "invalid_request_error")
        if request.headers.get("authorization", "") != f"Bearer {admin_key}":
            return _error(401, "Incorrect API key provided.", "invalid_request_error")
        try:
            return json_response(200, _page(cluster, clock(), request))
        except ValueError as exc:
            return _error(400, str(exc), "invalid_request_error")

    return handle


def _page(cluster: Cluster, now: datetime, request: FakeRequest) -> dict[str, Any]:
    start = _day_start(_seconds(request.arg("start_time"), "start_time"))
    end_arg = request.arg("end_time")
    end = min(_seconds(end_arg, "end_time") if end_arg else now, now)
    limit = int(request.arg("limit") or 7)
    if request.arg("bucket_width", "1d") != "1d" or not 1 <= limit <= 180:
        raise ValueError("Invalid bucket_width or limit")
    cursor = request.arg("page")
    first = (
        _day_start(datetime.fromtimestamp(int(base64.b64decode(cursor)), UTC)) if cursor else start
    )
    days: list[datetime] = []
    day = first
    while day < end and len(days) <= limit:
        days.append(day)
        day += DAY
    shown, more = days[:limit], len(days) > limit
    groups = set(request.query.get("group_by[]", []) + request.query.get("group_by", []))
    projects = request.query.get("project_ids[]", [])
    billed = openai_items(cluster, shown[0].date(), shown[-1].date(), now) if shown else []
    return {
        "object": "page",
        "data": [_bucket(d, billed, groups, projects) for d in shown],
        "has_more": more,
        "next_page": base64.b64encode(str(int(days[-1].timestamp())).encode()).decode()
        if more
        else None,
    }


def _bucket(
    day: datetime, billed: list[Any], groups: set[str], projects: list[str]
) -> dict[str, Any]:
    sums: dict[str | None, float] = {}
    if not projects or OPENAI_PROJECT in projects:
        for item in billed:
            if item.day == day.date():
                key = item.line_item if "line_item" in groups else None
                sums[key] = sums.get(key, 0.0) + item.amount
    results = [
        {
            "object": "organization.costs.result",
            "amount": {"value": round(value, 6), "currency": "usd"},
            "line_item": key,
            "project_id": OPENAI_PROJECT if "project_id" in groups else None,
        }
        for key, value in sorted(sums.items(), key=lambda kv: kv[0] or "")
    ]
    start = int(day.timestamp())
    return {"object": "bucket", "start_time": start, "end_time": start + 86400, "results": results}


def _seconds(text: str | None, name: str) -> datetime:
    if text is None or not text.isdigit():
        raise ValueError(f"Invalid value for '{name}': expected unix seconds")
    return datetime.fromtimestamp(int(text), UTC)


def _day_start(t: datetime) -> datetime:
    return t.replace(hour=0, minute=0, second=0, microsecond=0)


def _error(status: int, message: str, kind: str) -> FakeResponse:
    return json_response(
        status, {"error": {"message": message, "type": kind, "param": None, "code": None}}
    )

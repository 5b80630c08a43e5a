"""A fake of Anthropic's Admin API cost report (`GET /v1/organizations/cost_report`).

Speaks the API as its reference writes it (docs/sources/anthropic-costs.md): `x-api-key` (an
admin key) and `anthropic-version`, `starting_at`/`ending_at` in RFC 3339, `bucket_width=1d`,
`group_by[]` of `workspace_id` and `description`, `limit` (1 to 31, 7 by default) and the
`page` token of the last page's `next_page`; amounts are decimal strings in cents. The demo's
gateway sends nothing to Anthropic: this bill is a workspace used round it
(chargeback_demo.fake_bills).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from chargeback_demo.fake_bills import ANTHROPIC_DAILY_CENTS, ANTHROPIC_WORKSPACE
from chargeback_demo.httpfake import FakeRequest, FakeResponse, json_response
from chargeback_demo.litellm_rows import history_start
from exporter.clock import Clock

__all__ = ["MODEL", "PATH", "make_handler"]

PATH = "/v1/organizations/cost_report"
MODEL = "claude-sonnet-4-20250514"
DAY = timedelta(days=1)
Handler = Callable[[FakeRequest], FakeResponse]


def make_handler(clock: Clock, *, admin_key: str) -> Handler:
    """A request handler for the cost report."""

    def handle(request: FakeRequest) -> FakeResponse:
        if request.path != PATH or request.method != "GET":
            return _error(404, "not_found_error", "Not found")
        if request.headers.get("x-api-key") != admin_key:
            return _error(401, "authentication_error", "invalid x-api-key")
        if not request.headers.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version: header is required")
        try:
            return json_response(200, _page(clock(), request))
        except ValueError as exc:
            return _error(400, "invalid_request_error", str(exc))

    return handle


def _page(now: datetime, request: FakeRequest) -> dict[str, Any]:
    start = _rfc3339(request.arg("starting_at"), "starting_at")
    ending = request.arg("ending_at")
    end = min(_rfc3339(ending, "ending_at"), now) if ending else now
    limit = int(request.arg("limit") or 7)
    if request.arg("bucket_width", "1d") != "1d" or not 1 <= limit <= 31:
        raise ValueError("bucket_width: only 1d here; limit: 1 to 31")
    token = request.arg("page")
    day = _rfc3339(base64.b64decode(token[5:]).decode(), "page") if token else start
    day = day.replace(hour=0, minute=0, second=0, microsecond=0)
    days: list[datetime] = []
    while day < end and len(days) <= limit:
        days.append(day)
        day += DAY
    shown, more = days[:limit], len(days) > limit
    groups = set(request.query.get("group_by[]", []))
    billed_from = history_start(now)
    return {
        "data": [_bucket(d, groups, d >= billed_from) for d in shown],
        "has_more": more,
        "next_page": "page_" + base64.b64encode(_stamp(days[-1]).encode()).decode()
        if more
        else None,
    }


def _bucket(day: datetime, groups: set[str], billed: bool) -> dict[str, Any]:
    described = "description" in groups
    result = {
        "currency": "USD",
        "amount": ANTHROPIC_DAILY_CENTS,
        "workspace_id": ANTHROPIC_WORKSPACE if "workspace_id" in groups else None,
        "description": "Claude Sonnet 4 Usage - Input Tokens" if described else None,
        "cost_type": "tokens" if described else None,
        "context_window": "0-200k" if described else None,
        "model": MODEL if described else None,
        "service_tier": "standard" if described else None,
        "token_type": "uncached_input_tokens" if described else None,
    }
    return {
        "starting_at": _stamp(day),
        "ending_at": _stamp(day + DAY),
        "results": [result] if billed else [],
    }


def _rfc3339(text: str | None, name: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(text or "")
    except ValueError:
        raise ValueError(f"{name}: invalid RFC 3339 timestamp") from None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _stamp(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _error(status: int, kind: str, message: str) -> FakeResponse:
    return json_response(status, {"type": "error", "error": {"type": kind, "message": message}})

"""OpenAI's organization costs read into bill lines: paging, units, and every refusal."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from exporter.calendar import Month
from exporter.config.bills import OpenAICostsConfig
from exporter.errors import (
    ExchangeRateError,
    RecordsDropped,
    UpstreamIncomplete,
    UpstreamStatusError,
)
from exporter.sources.bills import openai_costs
from exporter.sources.bills.lines import BillKind
from exporter.sources.bills.settings import BillShared
from exporter.sources.reading import Reading

KEY = "sk-admin-test-openai-0123456789"
OCT = Reading.closed_month(Month.parse("2026-10", ZoneInfo("Europe/Madrid")))
SHARED = BillShared("openai", "EUR", {"USD": 0.9})
DAY1 = int(datetime(2026, 10, 1, tzinfo=UTC).timestamp())


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_OPENAI_ADMIN", KEY)


def _cfg(**extra: Any) -> OpenAICostsConfig:
    return OpenAICostsConfig.model_validate(
        {"type": "openai", "admin_key_env": "TEST_OPENAI_ADMIN", **extra}
    )


def _client(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.Client:
    return openai_costs.build_client(_cfg(), transport=httpx.MockTransport(handler))


def _bucket(day: int, *results: dict[str, Any]) -> dict[str, Any]:
    start = DAY1 + (day - 1) * 86400
    # As the API reference's example, keys in its order, with fields we do not read.
    return {
        "object": "bucket",
        "start_time": start,
        "end_time": start + 86400,
        "results": list(results),
    }


def _result(value: Any, item: str | None, project: str | None = "proj_abc") -> dict[str, Any]:
    return {
        "object": "organization.costs.result",
        "amount": {"value": value, "currency": "usd"},
        "line_item": item,
        "project_id": project,
        "api_key_id": None,
        "quantity": None,
    }


def test_pages_are_followed_and_every_line_kept_in_its_currency() -> None:
    seen: list[httpx.Request] = []
    first = {
        "object": "page",
        "data": [_bucket(1, _result(1.25, "gpt-4o-2024-08-06, input"))],
        "has_more": True,
        "next_page": "page_AAAA",
    }
    # Shaped unlike our fake: top-level keys reordered, the value as decimal text.
    second = {
        "next_page": None,
        "has_more": False,
        "data": [_bucket(2, _result("0.5", "gpt-4o-2024-08-06, cached input", None))],
        "object": "page",
    }

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        page = second if request.url.params.get("page") == "page_AAAA" else first
        return httpx.Response(200, json=page)

    bill = openai_costs.fetch(_client(handler), _cfg(), SHARED, OCT)
    assert [
        (line.day, line.amount, line.currency, line.model, line.scope) for line in bill.lines
    ] == [
        (date(2026, 10, 1), 1.25, "USD", "gpt-4o-2024-08-06", "proj_abc"),
        (date(2026, 10, 2), 0.5, "USD", "gpt-4o-2024-08-06", None),
    ]
    assert all(line.kind is BillKind.LLM and line.provider == "openai" for line in bill.lines)
    assert bill.days_billed == {date(2026, 10, 1), date(2026, 10, 2)}
    params = seen[0].url.params
    assert params["start_time"] == str(DAY1)
    assert params["end_time"] == str(int(datetime(2026, 11, 1, tzinfo=UTC).timestamp()))
    assert params["bucket_width"] == "1d"
    assert params.get_list("group_by[]") == ["line_item", "project_id"]
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert seen[0].url.path == "/v1/organization/costs"


def test_the_open_month_bills_only_the_days_that_ended() -> None:
    now = datetime(2026, 10, 3, 12, tzinfo=UTC)
    page = {"data": [_bucket(2, _result(1, "x")), _bucket(3, _result(1, "x"))], "has_more": False}
    reading = Reading.open(now, ZoneInfo("UTC"))
    bill = openai_costs.fetch(
        _client(lambda _: httpx.Response(200, json=page)), _cfg(), SHARED, reading
    )
    assert bill.days_billed == {date(2026, 10, 2)}
    assert len(bill.lines) == 2


def test_a_refused_admin_key_is_said_and_never_printed() -> None:
    body = {
        "error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}
    }
    client = _client(lambda _: httpx.Response(401, json=body))
    with pytest.raises(
        UpstreamStatusError, match=r"bills\.openai: admin key refused \(401\)"
    ) as err:
        openai_costs.fetch(client, _cfg(), SHARED, OCT)
    assert KEY not in str(err.value) and err.value.reason == "auth"


@pytest.mark.parametrize(
    ("value", "reason"),
    [(-3.5, "out_of_range"), ("abc", "wrong_type"), (None, "wrong_type"), ("NaN", "non_finite")],
)
def test_a_bad_amount_is_dropped_counted_and_fails_the_read(value: Any, reason: str) -> None:
    page = {"data": [_bucket(1, _result(value, "x"), _result(2.0, "y"))], "has_more": False}
    client = _client(lambda _: httpx.Response(200, json=page))
    with pytest.raises(RecordsDropped, match="cost results dropped: 1") as err:
        openai_costs.fetch(client, _cfg(), SHARED, OCT)
    assert err.value.dropped == {reason: 1}


def test_a_bucket_outside_the_month_is_dropped_and_counted() -> None:
    page = {"data": [_bucket(31 + 1, _result(1.0, "x"))], "has_more": False}
    client = _client(lambda _: httpx.Response(200, json=page))
    with pytest.raises(RecordsDropped, match=r"outside 2026-10-01\.\.2026-10-31"):
        openai_costs.fetch(client, _cfg(), SHARED, OCT)


def test_a_bill_in_a_currency_without_a_rate_is_refused_whole() -> None:
    result = _result(1.0, "x") | {"amount": {"value": 1.0, "currency": "jpy"}}
    page = {"data": [_bucket(1, result)], "has_more": False}
    client = _client(lambda _: httpx.Response(200, json=page))
    with pytest.raises(ExchangeRateError, match="billed in JPY, which is not EUR and has no rate"):
        openai_costs.fetch(client, _cfg(), SHARED, OCT)


def test_more_pages_without_a_cursor_fails_rather_than_stop_short() -> None:
    page = {"data": [], "has_more": True, "next_page": None}
    client = _client(lambda _: httpx.Response(200, json=page))
    with pytest.raises(UpstreamIncomplete, match="gave no next_page"):
        openai_costs.fetch(client, _cfg(), SHARED, OCT)


def test_a_cursor_handed_back_again_fails_rather_than_loop() -> None:
    page = {"data": [], "has_more": True, "next_page": "same"}
    client = _client(lambda _: httpx.Response(200, json=page))
    with pytest.raises(UpstreamIncomplete, match="handed back page 'same' again"):
        openai_costs.fetch(client, _cfg(), SHARED, OCT)


def test_scopes_keep_only_their_projects_and_ask_for_them() -> None:
    seen: list[httpx.Request] = []
    page = {"data": [_bucket(1, _result(1.0, "x", "proj_a"), _result(2.0, "x", "proj_b"))]}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=json.dumps(page | {"has_more": False}))

    cfg = _cfg(scopes=["proj_a"])
    bill = openai_costs.fetch(_client(handler), cfg, SHARED, OCT)
    assert [line.scope for line in bill.lines] == ["proj_a"]
    assert seen[0].url.params.get_list("project_ids[]") == ["proj_a"]


def test_a_line_item_names_its_model_before_the_comma() -> None:
    assert openai_costs.model_of("gpt-4o-2024-08-06, cached input") == "gpt-4o-2024-08-06"
    assert openai_costs.model_of("Image models") == "Image models"


def test_a_month_empty_after_holding_lines_waits_for_a_second_read() -> None:
    pages = [
        {"data": [_bucket(1, _result(1.0, "x"))], "has_more": False},
        {"data": [_bucket(1)], "has_more": False},
        {"data": [_bucket(1)], "has_more": False},
    ]
    client = _client(lambda _: httpx.Response(200, json=pages.pop(0)))
    assert openai_costs.fetch(client, _cfg(), SHARED, OCT).lines
    with pytest.raises(UpstreamIncomplete, match="the bill of 2026-10 came back empty"):
        openai_costs.fetch(client, _cfg(), SHARED, OCT)
    assert openai_costs.fetch(client, _cfg(), SHARED, OCT).lines == ()

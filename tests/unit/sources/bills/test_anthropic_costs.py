"""Anthropic's cost report read into bill lines: cents as decimal text, headers, refusals."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.calendar import Month
from exporter.config.bills import AnthropicCostsConfig
from exporter.errors import ExchangeRateError, RecordsDropped, UpstreamStatusError
from exporter.sources.bills import anthropic_costs
from exporter.sources.bills.admin import amount
from exporter.sources.bills.settings import BillShared
from exporter.sources.reading import Reading

KEY = "sk-ant-admin01-test-0123456789abcdef"
OCT = Reading.closed_month(Month.parse("2026-10", ZoneInfo("UTC")))
SHARED = BillShared("claude", "USD")


def _cfg(tmp_path: Any, **extra: Any) -> AnthropicCostsConfig:
    key = tmp_path / "admin-key"
    key.write_text(KEY + "\n")
    data = {"type": "anthropic", "admin_key_file": str(key), **extra}
    return AnthropicCostsConfig.model_validate(data)


def _client(
    cfg: AnthropicCostsConfig, handler: Callable[[httpx.Request], httpx.Response]
) -> httpx.Client:
    return anthropic_costs.build_client(cfg, transport=httpx.MockTransport(handler))


def _bucket(day: int, *results: dict[str, Any]) -> dict[str, Any]:
    # RFC 3339 with and without fractions, as the API reference's examples write them.
    return {
        "starting_at": f"2026-10-{day:02d}T00:00:00Z",
        "ending_at": f"2026-10-{day + 1:02d}T00:00:00.000000+00:00",
        "results": list(results),
    }


def _result(amount: Any, workspace: str | None = "wrkspc_01", **extra: Any) -> dict[str, Any]:
    return {
        "currency": "USD",
        "amount": amount,
        "workspace_id": workspace,
        "description": "Claude Sonnet 4 Usage - Input Tokens, Cache Read",
        "cost_type": "tokens",
        "context_window": "0-200k",
        "model": "claude-sonnet-4-20250514",
        "service_tier": "standard",
        "token_type": "cache_read_input_tokens",
        "inference_geo": None,
        **extra,
    }


def test_cents_as_decimal_text_become_currency_units(tmp_path: Any) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.params.get("page") == "page_MjAyNi0xMC0wMg==":
            return httpx.Response(
                200,
                json={
                    "data": [_bucket(2, _result("7", None))],
                    "has_more": False,
                    "next_page": None,
                },
            )
        page = {
            "data": [_bucket(1, _result("123.45"))],
            "has_more": True,
            "next_page": "page_MjAyNi0xMC0wMg==",
        }
        return httpx.Response(200, json=page)

    cfg = _cfg(tmp_path)
    bill = anthropic_costs.fetch(_client(cfg, handler), cfg, SHARED, OCT)
    assert [(line.day, line.amount, line.scope, line.model) for line in bill.lines] == [
        (date(2026, 10, 1), 1.2345, "wrkspc_01", "claude-sonnet-4-20250514"),
        (date(2026, 10, 2), 0.07, "default", "claude-sonnet-4-20250514"),
    ]
    request = seen[0]
    assert request.url.path == "/v1/organizations/cost_report"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.url.params["starting_at"] == "2026-10-01T00:00:00Z"
    assert request.url.params["ending_at"] == "2026-11-01T00:00:00Z"
    assert request.url.params.get_list("group_by[]") == ["workspace_id", "description"]
    assert bill.days_billed == {date(2026, 10, 1), date(2026, 10, 2)}


def test_a_refused_admin_key_marks_the_source_down_without_the_key(tmp_path: Any) -> None:
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    cfg = _cfg(tmp_path)
    with pytest.raises(UpstreamStatusError, match=r"admin key refused \(401\)$") as err:
        anthropic_costs.fetch(
            _client(cfg, lambda _: httpx.Response(401, json=body)), cfg, SHARED, OCT
        )
    assert KEY not in str(err.value)


@pytest.mark.parametrize(
    ("amount", "reason"),
    [
        ("-12.5", "out_of_range"),
        ("12,50", "wrong_type"),
        ("Infinity", "non_finite"),
        ([], "wrong_type"),
    ],
)
def test_a_bad_amount_is_dropped_counted_and_fails_the_read(
    tmp_path: Any, amount: Any, reason: str
) -> None:
    page = {
        "data": [_bucket(1, _result(amount), _result("1"))],
        "has_more": False,
        "next_page": None,
    }
    cfg = _cfg(tmp_path)
    with pytest.raises(RecordsDropped) as err:
        anthropic_costs.fetch(
            _client(cfg, lambda _: httpx.Response(200, json=page)), cfg, SHARED, OCT
        )
    assert err.value.dropped == {reason: 1}


def test_a_bill_in_euros_with_no_rate_is_refused(tmp_path: Any) -> None:
    page = {"data": [_bucket(1, _result("100", currency="EUR"))], "has_more": False}
    cfg = _cfg(tmp_path)
    with pytest.raises(ExchangeRateError, match="billed in EUR"):
        anthropic_costs.fetch(
            _client(cfg, lambda _: httpx.Response(200, json=page)), cfg, SHARED, OCT
        )


def test_a_bucket_that_is_not_one_day_is_dropped(tmp_path: Any) -> None:
    bucket = _bucket(1, _result("1")) | {"ending_at": "2026-10-01T01:00:00Z"}
    cfg = _cfg(tmp_path)
    page = {"data": [bucket], "has_more": False}
    with pytest.raises(RecordsDropped, match="not one UTC day"):
        anthropic_costs.fetch(
            _client(cfg, lambda _: httpx.Response(200, json=page)), cfg, SHARED, OCT
        )


def test_scopes_keep_their_workspaces_the_default_one_by_name(tmp_path: Any) -> None:
    page = {
        "data": [_bucket(1, _result("1", None), _result("2", "wrkspc_other"))],
        "has_more": False,
    }
    cfg = _cfg(tmp_path, scopes=["default"])
    bill = anthropic_costs.fetch(
        _client(cfg, lambda _: httpx.Response(200, json=page)), cfg, SHARED, OCT
    )
    assert [(line.scope, line.amount) for line in bill.lines] == [("default", 0.01)]


@given(st.decimals(min_value=0, max_value=10**9, places=2, allow_nan=False, allow_infinity=False))
def test_cents_as_text_are_read_exactly(cents: Decimal) -> None:
    assert amount(str(cents), "amount", scale=100) == float(cents / 100)

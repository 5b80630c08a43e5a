"""The fake LiteLLM proxy over loopback: month-to-date usage and budgets as the cluster has them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, time, timedelta
from typing import Any

import httpx
import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_litellm import make_handler
from chargeback_demo.httpfake import FakeServer
from exporter.errors import UpstreamStatusError
from exporter.sources.litellm.source import build_client
from tests.unit.sources.litellm.test_source import KEY, NOW, _cfg, fetch


@pytest.fixture(autouse=True)
def _key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_TEST_KEY", KEY)


@pytest.fixture
def fake() -> Iterator[Callable[..., str]]:
    servers: list[FakeServer] = []

    def start(**kw: Any) -> str:
        server = FakeServer(make_handler(CLUSTER, lambda: NOW, api_key=KEY, **kw)).start()
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.stop()


def _expected(now: datetime) -> dict[tuple[str | None, str], tuple[float, int, int, int]]:
    """Month-to-date usage per (team, model), integrated from the cluster model day by day."""
    out: dict[tuple[str | None, str], tuple[float, int, int, int]] = {}
    day = now.date().replace(day=1)
    while day <= now.date():
        start = datetime.combine(day, time(), UTC)
        sums: dict[Any, list[float]] = {}
        for traffic, _, hours in CLUSTER.llm_usage(start, min(start + timedelta(days=1), now)):
            acc = sums.setdefault(traffic, [0.0, 0.0, 0.0])
            acc[0] += traffic.prompt_per_hour * hours
            acc[1] += traffic.completion_per_hour * hours
            acc[2] += traffic.requests_per_hour * hours
        for traffic, (p, c, r) in sums.items():
            prompt, completion = round(p), round(c)  # LiteLLM stores whole tokens per day row
            spend = (
                prompt * traffic.input_cost_per_token + completion * traffic.output_cost_per_token
            )
            key = (traffic.team_id, traffic.model)
            s0, p0, c0, r0 = out.get(key, (0.0, 0, 0, 0))
            out[key] = (s0 + spend, p0 + prompt, c0 + completion, r0 + round(r))
        day += timedelta(days=1)
    return out


@pytest.mark.parametrize(
    ("kw", "page_size"),
    [({}, 1000), ({"aggregated": False}, 4), ({"version": "1.82"}, 5), ({"version": "1.74"}, 3)],
)
def test_month_to_date_usage_from_the_fake_is_exact(
    fake: Callable[..., str], kw: dict[str, Any], page_size: int
) -> None:
    url = fake(**kw)
    with build_client(_cfg(url)) as client:
        snap = fetch(
            client,
            _cfg(url, daily_page_size=page_size),
            NOW,
        )
    expected = _expected(NOW)
    got = {(u.team_id, u.model): u for u in snap.usage}
    assert set(got) == set(expected)
    for key, (spend, prompt, completion, requests) in expected.items():
        u = got[key]
        assert (u.prompt_tokens, u.completion_tokens, u.requests) == (prompt, completion, requests)
        assert u.spend == pytest.approx(spend, rel=1e-12)
    assert got[("b71e44d2-vision", "gpt-4o")].alias == "vision"
    assert got[(None, "gpt-4o")].alias is None
    # The fake, like LiteLLM, serves public names from provider models with other names.
    assert got[("c0a8d9e3-search", "llama-3-70b")].deployment == (
        "hosted_vllm/meta-llama/Meta-Llama-3-70B-Instruct"
    )
    assert got[(None, "gpt-4o")].deployment == "gpt-4o-2024-08-06"


def test_budgets_from_the_fake(fake: Callable[..., str]) -> None:
    url = fake()
    with build_client(_cfg(url)) as client:
        snap = fetch(client, _cfg(url, page_size=2), NOW)
    teams = {t.team_id: t for t in snap.teams}
    vision = teams["b71e44d2-vision"]
    month_spend = sum(s for (team, _), (s, *_) in _expected(NOW).items() if team == vision.team_id)
    assert vision.spend == pytest.approx(month_spend, rel=1e-12)
    assert (vision.max_budget, vision.soft_budget) == (150.0, 100.0)
    assert vision.budget_reset_at == datetime(2026, 12, 1, tzinfo=UTC)
    search = teams["c0a8d9e3-search"]
    assert (search.alias, search.max_budget, search.budget_reset_at) == (None, None, None)


def test_vision_passes_80_percent_of_its_budget_this_month() -> None:
    end_of_month = datetime(2026, 11, 30, 23, 0, tzinfo=UTC)
    handler = make_handler(CLUSTER, lambda: end_of_month, api_key=KEY)
    server = FakeServer(handler).start()
    try:
        with build_client(_cfg(server.url)) as client:
            snap = fetch(client, _cfg(server.url), end_of_month)
    finally:
        server.stop()
    vision = next(t for t in snap.teams if t.alias == "vision")
    assert vision.spend is not None and vision.max_budget is not None
    assert vision.spend > 0.8 * vision.max_budget


def test_older_proxy_has_no_soft_budget(fake: Callable[..., str]) -> None:
    url = fake(version="1.74")
    with build_client(_cfg(url)) as client:
        snap = fetch(client, _cfg(url), NOW)
    assert {t.soft_budget for t in snap.teams} == {None}


def test_wrong_key_gives_one_clear_error(fake: Callable[..., str]) -> None:
    url = fake()
    client = build_client(_cfg(url))
    client.headers["Authorization"] = "Bearer sk-wrong-key-98765"
    with client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, _cfg(url), NOW)
    assert str(err.value) == (
        "litellm: HTTP 401 from /v2/team/list: Authentication Error, Invalid proxy server token "
        "passed. Unable to find token in cache or `LiteLLM_VerificationTokenTable`"
        " — check the API key"
    )
    assert "sk-wrong-key-98765" not in str(err.value)


def test_fake_speaks_the_real_error_shapes(fake: Callable[..., str]) -> None:
    url = fake(aggregated=False)
    auth = {"Authorization": f"Bearer {KEY}"}
    no_prefix = httpx.get(f"{url}/v2/team/list", headers={"Authorization": KEY})
    assert no_prefix.status_code == 401
    assert no_prefix.json()["error"]["message"] == (
        "Malformed API Key passed in. Ensure Key has `Bearer ` prefix."
    )
    assert no_prefix.json()["error"]["code"] == "401"
    too_big = httpx.get(f"{url}/v2/team/list", params={"page_size": 101}, headers=auth)
    assert too_big.status_code == 422
    assert too_big.json()["detail"][0]["loc"] == ["query", "page_size"]
    no_dates = httpx.get(f"{url}/team/daily/activity", headers=auth)
    assert (no_dates.status_code, no_dates.json()) == (
        400,
        {"detail": {"error": "Please provide start_date and end_date"}},
    )
    gone = httpx.get(f"{url}/team/daily/activity/aggregated", headers=auth)
    assert (gone.status_code, gone.json()) == (404, {"detail": "Not Found"})
    alive = httpx.get(f"{url}/health/liveliness")
    assert (alive.status_code, json.loads(alive.text)) == (200, "I'm alive!")


def test_fake_pages_cut_a_date_in_two(fake: Callable[..., str]) -> None:
    url = fake()
    auth = {"Authorization": f"Bearer {KEY}"}
    params = {"start_date": "2026-11-18", "end_date": "2026-11-19", "page_size": "4"}
    pages = [
        httpx.get(f"{url}/team/daily/activity", params={**params, "page": str(p)}, headers=auth)
        for p in (1, 2, 3)
    ]
    dates = [[r["date"] for r in page.json()["results"]] for page in pages]
    shared = set(dates[0]) & set(dates[1])
    assert shared, dates
    meta = pages[0].json()["metadata"]
    assert (meta["page"], meta["has_more"]) == (1, True)
    assert meta["total_prompt_tokens"] == sum(
        r["metrics"]["prompt_tokens"] for r in pages[0].json()["results"]
    )

"""LiteLLM source: parsing and paging against mocked responses."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from exporter.config.schema import Config, LiteLLMConfig, SourcesConfig
from exporter.errors import (
    RecordsDropped,
    UpstreamIncomplete,
    UpstreamPayloadError,
    UpstreamStatusError,
    UpstreamTooLarge,
    UpstreamUnavailable,
)
from exporter.sources.checks import Tally
from exporter.sources.litellm.snapshot import LiteLLMSnapshot, ModelUsage
from exporter.sources.litellm.source import KIND as LITELLM_KIND
from exporter.sources.litellm.source import build_client, merge_daily_pages, parse_timestamp
from exporter.sources.reading import Reading
from tests.support.litellm_rows import date_runs

KEY = "sk-test-viewer-0123456789"
NOW = datetime(2026, 11, 19, 13, 30, tzinfo=UTC)


def fetch(client: httpx.Client, cfg: LiteLLMConfig, now: datetime) -> LiteLLMSnapshot:
    """The source's fetch with a config holding only this section."""
    config = Config(sources=SourcesConfig(litellm=cfg))
    return LITELLM_KIND.fetch_from_config(client, config, Reading.open(now, config.zone))


@pytest.fixture(autouse=True)
def _key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_TEST_KEY", KEY)


def _cfg(url: str = "http://litellm:4000", **kw: Any) -> LiteLLMConfig:
    return LiteLLMConfig(url=url, api_key_env="LITELLM_TEST_KEY", **{"currency": "EUR", **kw})


Route = Callable[[httpx.Request], httpx.Response]


def _client(route: Route, seen: list[httpx.Request] | None = None, **kw: Any) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request)
        return route(request)

    return build_client(_cfg(**kw), transport=httpx.MockTransport(handler))


def _team(team_id: str, **fields: Any) -> dict[str, Any]:
    return {"team_id": team_id, "team_alias": None, "spend": 0.0, "max_budget": None, **fields}


def _teams_page(
    teams: list[dict[str, Any]], page: int = 1, total_pages: int = 1, total: int | None = None
) -> dict[str, Any]:
    # `total` counts every team, not this page's (LiteLLM: total_pages = ceil(total/page_size)).
    count = len(teams) if total is None else total
    return {"teams": teams, "total": count, "page": page, "total_pages": total_pages}


def _metrics(spend: float | None, prompt: int, completion: int, requests: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "api_requests": requests,
        "future_field": {"ignored": True},
    }
    if spend is not None:
        out["spend"] = spend
    return out


def _day(day: str, entities: dict[str, Any], models: dict[str, Any]) -> dict[str, Any]:
    return {
        "date": day,
        "metrics": {},
        "breakdown": {"entities": entities, "models": models, "providers": {}, "new_one": {}},
    }


def _entry(metrics: dict[str, Any], alias: str | None = None) -> dict[str, Any]:
    meta = {} if alias is None else {"team_alias": alias}
    return {"metrics": metrics, "metadata": meta, "api_key_breakdown": {}}


def _activity(results: list[dict[str, Any]], page: int = 1, total_pages: int = 1) -> dict[str, Any]:
    meta = {"page": page, "total_pages": total_pages, "has_more": page < total_pages}
    return {"results": results, "metadata": {**meta, "total_spend": 999.0}}


def _json(status: int, body: Any) -> httpx.Response:
    # json.dumps, not httpx's json=: a Python proxy really can put NaN on the wire.
    headers = {"content-type": "application/json"}
    return httpx.Response(status, content=json.dumps(body).encode(), headers=headers)


class Proxy:
    """A scripted proxy: team pages, and daily activity per (model filter, page)."""

    def __init__(
        self,
        teams: list[dict[str, Any]],
        daily: dict[str | None, list[dict[str, Any]]],
        *,
        aggregated: bool = True,
    ) -> None:
        self.teams = teams
        self.daily = daily
        self.aggregated = aggregated

    def __call__(self, request: httpx.Request) -> httpx.Response:
        params = request.url.params
        if request.url.path == "/v2/team/list":
            return _json(200, self.teams[int(params["page"]) - 1])
        model = params.get("model")
        if request.url.path == "/team/daily/activity/aggregated":
            if not self.aggregated:
                return _json(404, {"detail": "Not Found"})
            return _json(200, merge_all(self.daily.get(model, [])))
        if request.url.path == "/team/daily/activity":
            pages = self.daily.get(model, [_activity([])])
            return _json(200, pages[int(params["page"]) - 1])
        return _json(404, {"detail": "Not Found"})


def merge_all(pages: list[dict[str, Any]]) -> dict[str, Any]:
    results = [r for p in pages for r in p["results"]]
    return _activity(results)


SPLIT_DAILY: dict[str | None, list[dict[str, Any]]] = {
    # The unfiltered read only tells which models exist.
    None: [
        _activity([_day("2026-11-19", {}, {"gpt-4o": _entry(_metrics(1.0, 1, 1, 1))})], 1, 2),
        _activity([_day("2026-11-18", {}, {"llama-3-70b": _entry(_metrics(1, 1, 1, 1))})], 2, 2),
    ],
    # 2026-11-18 is cut in two by the row paging: team-a's rows sit on both pages.
    "gpt-4o": [
        _activity(
            [
                _day("2026-11-19", {"team-a": _entry(_metrics(0.5, 100, 10, 2), "A")}, {}),
                _day("2026-11-18", {"team-a": _entry(_metrics(0.25, 40, 4, 1), "A")}, {}),
            ],
            1,
            2,
        ),
        _activity(
            [
                _day(
                    "2026-11-18",
                    {
                        "team-a": _entry(_metrics(0.125, 60, 6, 1), "A"),
                        "Unassigned": _entry(_metrics(0.0625, 7, 3, 1)),
                    },
                    {},
                )
            ],
            2,
            2,
        ),
    ],
    "llama-3-70b": [
        _activity([_day("2026-11-18", {"c0a8d9e3-search": _entry(_metrics(None, 5, 2, 1))}, {})])
    ],
}

TEAMS = [
    _teams_page(
        [
            _team(
                "team-a",
                team_alias="A",
                spend=12.5,
                max_budget=100.0,
                soft_budget=80.0,
                budget_duration="30d",
                budget_reset_at="2026-12-01T00:00:00Z",
                members_with_roles=[{"user_id": "u1", "role": "admin"}],
                brand_new_field={"x": 1},
            )
        ],
        1,
        2,
        total=2,
    ),
    _teams_page(
        [{"team_id": "c0a8d9e3-search", "team_alias": None, "max_budget": None, "spend": 3.0}],
        2,
        2,
        total=2,
    ),
]


def _fetch(proxy: Proxy, seen: list[httpx.Request] | None = None, **kw: Any) -> LiteLLMSnapshot:
    with _client(proxy, seen, **kw) as client:
        return fetch(client, _cfg(**kw), NOW)


# --- team list -------------------------------------------------------------------------------


def test_team_list_pages_and_parses_budget_fields() -> None:
    seen: list[httpx.Request] = []
    snap = _fetch(Proxy(TEAMS, SPLIT_DAILY), seen)
    a, search = snap.teams
    assert (a.team_id, a.alias, a.spend, a.max_budget, a.soft_budget) == (
        "team-a",
        "A",
        12.5,
        100.0,
        80.0,
    )
    assert a.budget_reset_at == datetime(2026, 12, 1, tzinfo=UTC)
    # null max_budget is "no cap", never 0; a missing soft_budget is unknown.
    assert (search.alias, search.max_budget, search.soft_budget, search.spend) == (
        None,
        None,
        None,
        3.0,
    )
    team_calls = [r for r in seen if r.url.path == "/v2/team/list"]
    assert [r.url.params["page"] for r in team_calls] == ["1", "2"]
    assert {r.url.params["page_size"] for r in team_calls} == {"100"}
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"


def test_missing_spend_on_team_is_unknown() -> None:
    teams = [_teams_page([{"team_id": "t", "team_alias": "x"}])]
    snap = _fetch(Proxy(teams, {}))
    assert snap.teams[0].spend is None
    assert snap.usage == ()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-12-01T00:00:00Z", datetime(2026, 12, 1, tzinfo=UTC)),
        ("2026-12-01T00:00:00+00:00", datetime(2026, 12, 1, tzinfo=UTC)),
        ("2026-12-01T00:00:00", datetime(2026, 12, 1, tzinfo=UTC)),
        ("2026-12-01 00:00:00.123", datetime(2026, 12, 1, 0, 0, 0, 123000, tzinfo=UTC)),
        ("2026-12-01T01:00:00.123456789+01:00", datetime(2026, 12, 1, 0, 0, 0, 123456, tzinfo=UTC)),
        (None, None),
    ],
)
def test_timestamps_parse_leniently(raw: str | None, expected: datetime | None) -> None:
    assert parse_timestamp(raw) == expected


@pytest.mark.parametrize("raw", ["next tuesday", 1733011200, ""])
def test_bad_timestamps_are_payload_errors(raw: object) -> None:
    with pytest.raises(UpstreamPayloadError):
        parse_timestamp(raw)


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"teams": None, "total_pages": 1},
        {"teams": [{"team_alias": "no id"}], "total_pages": 1},
        {"teams": [_team("t", max_budget="100")], "total_pages": 1},
        {"teams": [_team("t", spend=True)], "total_pages": 1},
        {"teams": [_team("t", budget_reset_at="soon")], "total_pages": 1},
        {"teams": []},
        {"teams": [], "total_pages": "1"},
    ],
)
def test_bad_team_payloads_raise_payload_error(body: Any) -> None:
    with _client(lambda r: _json(200, body)) as client, pytest.raises(UpstreamPayloadError):
        fetch(client, _cfg(), NOW)


def test_non_json_body_is_a_payload_error() -> None:
    with (
        _client(lambda r: httpx.Response(200, text="<html>")) as client,
        pytest.raises(UpstreamPayloadError),
    ):
        fetch(client, _cfg(), NOW)


# --- errors ----------------------------------------------------------------------------------


def test_401_names_the_endpoint_and_the_fix_but_never_the_key() -> None:
    body = {
        "error": {
            # Some proxies echo what they received; it must not reach our logs.
            "message": f"Authentication Error, Invalid proxy server token passed. got {KEY}",
            "type": "auth_error",
            "param": "None",
            "code": "401",
        }
    }
    with _client(lambda r: _json(401, body)) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, _cfg(), NOW)
    message = str(err.value)
    assert message == (
        "litellm: HTTP 401 from /v2/team/list: Authentication Error, Invalid proxy server "
        "token passed. got <redacted> — check the API key"
    )
    assert KEY not in message and KEY not in repr(err.value)
    assert err.value.reason == "auth"


def test_detail_error_shape_is_understood() -> None:
    body = {"detail": {"error": "No db connected. prisma client=None"}}
    with _client(lambda r: _json(500, body)) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, _cfg(), NOW)
    assert str(err.value) == (
        "litellm: HTTP 500 from /v2/team/list: No db connected. prisma client=None"
    )
    assert err.value.status == 500


def test_error_shape_on_daily_endpoint() -> None:
    def route(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v2/team/list":
            return _json(200, _teams_page([]))
        body = {"error": {"message": "Budget thing", "type": "x", "param": None, "code": "400"}}
        return _json(400, body)

    with _client(route) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, _cfg(), NOW)
    assert str(err.value) == (
        "litellm: HTTP 400 from /team/daily/activity/aggregated: Budget thing"
    )


def test_403_suggests_the_viewer_role() -> None:
    body = {"error": {"message": "forbidden", "type": "auth_error", "code": "403"}}
    with _client(lambda r: _json(403, body)) as client, pytest.raises(UpstreamStatusError) as err:
        fetch(client, _cfg(), NOW)
    assert "proxy_admin_viewer" in str(err.value)


def test_transport_errors_are_unavailable() -> None:
    def route(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with _client(route) as client, pytest.raises(UpstreamUnavailable):
        fetch(client, _cfg(), NOW)


def test_the_key_stays_out_of_the_client_repr() -> None:
    with _client(lambda r: _json(200, {})) as client:
        assert KEY not in repr(client)


# --- daily activity --------------------------------------------------------------------------


def _usage(snap: LiteLLMSnapshot) -> dict[tuple[str | None, str], ModelUsage]:
    return {(u.team_id, u.model): u for u in snap.usage}


@pytest.mark.parametrize("aggregated", [True, False])
def test_a_date_split_across_pages_is_merged_exactly(aggregated: bool) -> None:
    seen: list[httpx.Request] = []
    snap = _fetch(Proxy(TEAMS, SPLIT_DAILY, aggregated=aggregated), seen, daily_page_size=2)
    usage = _usage(snap)
    a = usage[("team-a", "gpt-4o")]
    assert (a.spend, a.prompt_tokens, a.completion_tokens, a.requests) == (0.875, 200, 20, 4)
    assert a.alias == "A"
    unassigned = usage[(None, "gpt-4o")]
    assert (unassigned.spend, unassigned.prompt_tokens, unassigned.alias) == (0.0625, 7, None)
    # A proxy that does not report spend: unknown, not zero; tokens still count.
    search = usage[("c0a8d9e3-search", "llama-3-70b")]
    assert (search.spend, search.prompt_tokens, search.completion_tokens) == (None, 5, 2)
    assert set(usage) == {
        ("team-a", "gpt-4o"),
        (None, "gpt-4o"),
        ("c0a8d9e3-search", "llama-3-70b"),
    }
    # The month so far, in the UTC dates LiteLLM keys its rows by, one date per read.
    path = "/team/daily/activity" + ("/aggregated" if aggregated else "")
    assert date_runs(r.url for r in seen if r.url.path == path) == [("2026-11-01", "2026-11-19")]


def test_missing_aggregated_endpoint_falls_back_to_paging_once() -> None:
    seen: list[httpx.Request] = []
    _fetch(Proxy(TEAMS, SPLIT_DAILY, aggregated=False), seen, daily_page_size=7)
    paths = [r.url.path for r in seen if "daily" in r.url.path]
    # One 404, then the paged endpoint: the discovery read date by date, then each model's
    # read over the month.
    assert paths.count("/team/daily/activity/aggregated") == 1
    paged = [r for r in seen if r.url.path == "/team/daily/activity"]
    assert date_runs(r.url for r in paged) == [("2026-11-01", "2026-11-19")]
    per_model = [r for r in paged if "model" in r.url.params]
    assert [(r.url.params["model"], r.url.params["page"]) for r in per_model] == [
        ("gpt-4o", "1"),
        ("gpt-4o", "2"),
        ("llama-3-70b", "1"),
    ]
    assert {r.url.params["page_size"] for r in paged} == {"7"}
    assert {(r.url.params["start_date"], r.url.params["end_date"]) for r in per_model} == {
        ("2026-11-01", "2026-11-19")
    }


def test_merge_sums_never_overwrites() -> None:
    page1 = _activity([_day("2026-11-02", {"t": _entry(_metrics(1.5, 10, 1, 1))}, {})])
    page2 = _activity([_day("2026-11-02", {"t": _entry(_metrics(2.25, 5, 2, 3))}, {})])
    merged = merge_daily_pages([page1, page2])
    metrics, _ = merged["2026-11-02"]["entities"]["t"]
    assert (metrics.spend, metrics.prompt_tokens, metrics.completion_tokens, metrics.requests) == (
        3.75,
        15,
        3,
        4,
    )


@pytest.mark.parametrize(
    "body",
    [
        {"results": None},
        {"results": [{"date": 20261102}]},
        {"results": [{"date": "2026-11-02", "breakdown": []}]},
    ],
)
def test_bad_daily_payloads_raise_payload_error(body: Any) -> None:
    with pytest.raises(UpstreamPayloadError):
        merge_daily_pages([body])


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        (1, "wrong_type"),
        ({}, "missing_field"),
        (_entry({"prompt_tokens": "10"}), "wrong_type"),
        (_entry({"prompt_tokens": 1.5}), "wrong_type"),
        (_entry({"prompt_tokens": -1}), "out_of_range"),
        (_entry({"prompt_tokens": 10**15}), "out_of_range"),
        (_entry({"spend": float("nan")}), "non_finite"),
        (_entry({"spend": -0.5}), "out_of_range"),
        (_entry({"spend": 1e308}), "out_of_range"),
        (_entry({"spend": None}), "missing_field"),  # null is a broken row, never zero
    ],
)
def test_one_bad_daily_row_is_dropped_and_counted(entry: Any, reason: str) -> None:
    good = _entry({"prompt_tokens": 7})
    body = {"results": [_day("2026-11-02", {"bad": entry, "good": good}, {})]}
    tally = Tally()
    merged = merge_daily_pages([json.loads(json.dumps(body))], tally)
    assert set(merged["2026-11-02"]["entities"]) == {"good"}
    assert merged["2026-11-02"]["entities"]["good"][0].prompt_tokens == 7
    assert tally.frozen() == {reason: 1}


def test_paged_daily_without_total_pages_is_a_payload_error() -> None:
    def route(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v2/team/list":
            return _json(200, _teams_page([]))
        if request.url.path.endswith("aggregated"):
            return _json(404, {"detail": "Not Found"})
        return _json(200, {"results": [], "metadata": {}})

    with _client(route) as client, pytest.raises(UpstreamPayloadError):
        fetch(client, _cfg(), NOW)


# --- team-list truth: overlapping, short, changing and endless pages --------------------------


def _t(team_id: str, spend: float = 1.0) -> dict[str, Any]:
    # Keys in another order than our fakes write them, and a field we do not know.
    return {"spend": spend, "team_id": team_id, "max_budget": 50, "blocked": False}


def test_overlapping_identical_pages_count_a_team_once() -> None:
    teams = [
        _teams_page([_t("b"), _t("a")], 1, 2, total=3),
        _teams_page([_t("a"), _t("c")], 2, 2, total=3),  # "a" again, unchanged
    ]
    snap = _fetch(Proxy(teams, {}))
    assert [t.team_id for t in snap.teams] == ["b", "a", "c"]
    assert sum(t.spend or 0.0 for t in snap.teams) == 3.0  # not 4: "a" is not doubled
    assert snap.dropped == {"duplicate": 1}


@pytest.mark.parametrize(
    ("pages", "needle"),
    [
        # A team created between the two requests: total moves from 3 to 4.
        (
            [
                _teams_page([_t("b"), _t("a")], 1, 2, total=3),
                _teams_page([_t("a"), _t("c")], 2, 2, total=4),
            ],
            "total changed",
        ),
        # One page of a set that claims five teams.
        ([_teams_page([_t("a"), _t("b"), _t("c")], 1, 1, total=5)], "but total is 5"),
        # The same team twice with different spend: either could be the wrong one.
        (
            [
                _teams_page([_t("a", 1.0), _t("b")], 1, 2, total=3),
                _teams_page([_t("a", 2.0), _t("c")], 2, 2, total=3),
            ],
            "different values",
        ),
    ],
)
def test_team_pages_that_do_not_add_up_fail_the_refresh(
    pages: list[dict[str, Any]], needle: str
) -> None:
    with pytest.raises(UpstreamIncomplete, match=needle) as caught:
        _fetch(Proxy(pages, {}))
    assert caught.value.reason == "incomplete"


def test_a_paginator_that_never_ends_is_cut_off_after_one_extra_page() -> None:
    seen: list[httpx.Request] = []

    def endless(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        page = int(request.url.params["page"])
        # Every page announces one more page than the last, forever.
        body = {"teams": [_t(f"t{page}")], "page": page, "total_pages": page + 1}
        return _json(200, body)

    transport = httpx.MockTransport(endless)
    with (
        httpx.Client(base_url="http://proxy", transport=transport) as client,
        pytest.raises(UpstreamIncomplete, match="kept announcing more pages"),
    ):
        fetch(client, _cfg(), NOW)
    assert len(seen) == 3  # the first page said 2; one extra page is allowed, no more


def test_a_page_count_no_refresh_reads_is_refused_at_the_first_page() -> None:
    seen: list[httpx.Request] = []

    def boastful(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return _json(200, {"teams": [_t("a")], "page": 1, "total_pages": 10**9})

    transport = httpx.MockTransport(boastful)
    with (
        httpx.Client(base_url="http://proxy", transport=transport) as client,
        pytest.raises(UpstreamTooLarge, match="announces 1000000000 pages") as caught,
    ):
        fetch(client, _cfg(), NOW)
    assert len(seen) == 1 and caught.value.reason == "too_large"


def test_last_page_with_has_more_is_a_short_read() -> None:
    body = _activity([], 1, 1)
    body["metadata"]["has_more"] = True
    with pytest.raises(UpstreamIncomplete, match="has_more"):
        _fetch(Proxy([_teams_page([])], {None: [body]}, aggregated=False))


@pytest.mark.parametrize(
    ("team", "reason"),
    [
        ({"team_id": "x", "spend": float("nan")}, "non_finite"),
        ({"team_id": "x", "spend": -1}, "out_of_range"),
        # A null budget spend once removed the team's budget series with the source up.
        ({"team_id": "x", "spend": None}, "missing_field"),
        ({"team_id": "x", "max_budget": 1e308}, "out_of_range"),
        ({"team_id": "x", "soft_budget": "80"}, "wrong_type"),
        ({"team_alias": "no id"}, "missing_field"),
        ({"team_id": "x", "budget_reset_at": "soon"}, "wrong_type"),
    ],
)
def test_one_bad_team_is_dropped_counted_and_fails_the_read(
    team: dict[str, Any], reason: str
) -> None:
    # Its spend and budgets would be missing from what is served: the last read stays.
    with pytest.raises(RecordsDropped) as err:
        _fetch(Proxy([_teams_page([team, _t("good")], total=2)], {}))
    assert err.value.dropped == {reason: 1} and err.value.reason == "malformed"


# --- null spend ----------------------------------------------------------------------------------


@pytest.mark.parametrize("aggregated", [True, False])
def test_a_null_spend_in_the_daily_activity_fails_the_read(aggregated: bool) -> None:
    # The strict decoder refuses the null, and the record-by-record pass drops and counts it.
    daily: dict[str | None, list[dict[str, Any]]] = {
        None: [
            _activity(
                [
                    _day(
                        "2026-11-19",
                        {"team-a": _entry({**_metrics(None, 1, 1, 1), "spend": None})},
                        {"gpt-4o": _entry(_metrics(1.0, 1, 1, 1))},
                    )
                ]
            )
        ]
    }
    with pytest.raises(RecordsDropped) as err:
        _fetch(Proxy(TEAMS, daily, aggregated=aggregated))
    # The scripted proxy answers each date of the month alike: one drop per date read.
    assert set(err.value.dropped) == {"missing_field"}


def test_an_absent_spend_stays_unknown_not_dropped() -> None:
    # An older proxy sends no spend at all: unknown, as before.
    snap = _fetch(Proxy(TEAMS, SPLIT_DAILY))
    assert {u.spend for u in snap.usage if u.team_id == "c0a8d9e3-search"} == {None}

"""LiteLLM tag spend: `/tag/daily/activity` pages summed per tag, bad tags dropped and counted."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from exporter.config.schema import LiteLLMConfig
from exporter.errors import RecordsDropped, UpstreamIncomplete, UpstreamPayloadError
from exporter.sources.checks import Tally
from exporter.sources.litellm.cache import MonthDates
from exporter.sources.litellm.source import LiteLLMShared, build_client, fetch
from exporter.sources.litellm.tags import TAG_DAILY, read_tag_spend, tag_spend
from exporter.sources.reading import Reading

DATES = MonthDates(date(2026, 11, 1), date(2026, 11, 19), date(2026, 11, 19), 0, 0.0)


@pytest.fixture(autouse=True)
def _key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_TEST_KEY", "sk-test-viewer-0123456789")


def _keys(spend: float) -> dict[str, Any]:
    # Two thirds from team-a's key, a third from a key with no team.
    return {
        "hash-a": {"metrics": {"spend": spend * 2 / 3}, "metadata": {"team_id": "team-a"}},
        "hash-x": {"metrics": {"spend": spend / 3}, "metadata": {"team_id": None}},
    }


def _page(days: dict[str, dict[str, float]], page: int, pages: int) -> dict[str, Any]:
    results = [
        {
            "date": day,
            "metrics": {"spend": sum(tags.values())},
            "breakdown": {
                "entities": {
                    tag: {
                        "metrics": {"spend": spend},
                        "metadata": {},
                        "api_key_breakdown": _keys(spend),
                    }
                    for tag, spend in tags.items()
                }
            },
        }
        for day, tags in days.items()
    ]
    meta = {"page": page, "total_pages": pages, "has_more": page < pages}
    return {"results": results, "metadata": meta}


def test_pages_are_summed_per_tag_and_a_date_on_two_pages_adds_up() -> None:
    pages = {
        "1": _page({"2026-11-19": {"product:rag": 1.5}, "2026-11-18": {"product:rag": 1.0}}, 1, 2),
        "2": _page({"2026-11-18": {"product:rag": 0.5, "env:prod": 2.0}}, 2, 2),
    }
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        assert request.url.path == TAG_DAILY
        return httpx.Response(200, json=pages[request.url.params["page"]])

    cfg = LiteLLMConfig(url="http://litellm:4000", api_key_env="LITELLM_TEST_KEY")
    client = build_client(cfg, transport=httpx.MockTransport(handler))
    tally = Tally()
    totals, by_team = read_tag_spend(client, cfg, DATES, tally)
    assert totals == {"product:rag": 3.0, "env:prod": 2.0}
    assert by_team == pytest.approx(
        {
            ("team-a", "product:rag"): 2.0,
            ("", "product:rag"): 1.0,
            ("team-a", "env:prod"): 4 / 3,
            ("", "env:prod"): 2 / 3,
        }
    )
    assert not tally
    params = seen[0].url.params
    assert (params["start_date"], params["end_date"]) == ("2026-11-01", "2026-11-19")


def test_a_bad_tag_is_dropped_and_counted() -> None:
    body = _page({"2026-11-19": {"ok": 1.0}}, 1, 1)
    entities = body["results"][0]["breakdown"]["entities"]
    entities["nan"] = {"metrics": {"spend": float("nan")}}
    entities["negative"] = {"metrics": {"spend": -1.0}}
    entities["no-metrics"] = {"metadata": {}}
    entities["null"] = {"metrics": {"spend": None}}
    entities["no-spend"] = {"metrics": {"prompt_tokens": 3}}
    entities["text"] = {"metrics": {"spend": "1.5"}}
    # A key whose team does not parse is a dropped record too (the caller refuses the read).
    entities["ok"]["api_key_breakdown"]["hash-a"]["metadata"]["team_id"] = 7
    tally = Tally()
    totals, by_team = tag_spend(json.loads(json.dumps(body)), tally)
    assert totals == {"ok": 1.0}
    assert by_team == pytest.approx({("", "ok"): 1 / 3})
    assert tally == {"non_finite": 1, "out_of_range": 1, "wrong_type": 3, "missing_field": 2}


@pytest.mark.parametrize(
    "garbage",
    [
        "not an object",
        {"hash-a": "garbage"},
        {"hash-a": {"metrics": {"spend": "lots"}}},
        {"hash-a": {"metrics": {"spend": None}}},
        {"hash-a": {"metrics": [], "metadata": {}}},
        {"hash-a": {"metrics": {"spend": 1.0}, "metadata": "team-a"}},
        {"hash-a": {"metrics": {"spend": 1.0}, "metadata": {"team_id": "x" * 5000}}},
    ],
)
def test_a_key_breakdown_with_garbage_is_dropped_and_counted(garbage: object) -> None:
    body = _page({"2026-11-19": {"ok": 1.0}}, 1, 1)
    body["results"][0]["breakdown"]["entities"]["ok"]["api_key_breakdown"] = garbage
    tally = Tally()
    totals, _ = tag_spend(body, tally)
    assert totals == {"ok": 1.0}
    assert tally.bad() == 1


def test_a_key_without_metrics_or_team_is_no_record_to_drop() -> None:
    # LiteLLM's own example: a key's metrics may be {} and its metadata hold no team.
    body = _page({"2026-11-19": {"ok": 1.0}}, 1, 1)
    body["results"][0]["breakdown"]["entities"]["ok"]["api_key_breakdown"] = {
        "hash-a": {"metrics": {}, "metadata": {"team_id": None}},
        "hash-b": {"metrics": {"spend": 1.0}},
    }
    tally = Tally()
    _, by_team = tag_spend(body, tally)
    assert by_team == {("", "ok"): 1.0}
    assert not tally


def test_a_body_without_results_is_a_payload_error() -> None:
    with pytest.raises(UpstreamPayloadError):
        tag_spend({"data": []}, Tally())


# --- in the source's read: emptiness and refusal -------------------------------------------------

NOW = datetime(2026, 11, 19, 13, 30, tzinfo=UTC)


class _Proxy:
    """One team, one date of use, and a tag endpoint answering what `tags` holds now."""

    def __init__(self) -> None:
        self.tags: tuple[int, dict[str, Any]] = (200, _page({"2026-11-19": {"p:a": 1.0}}, 1, 1))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/v2/team/list":
            body: dict[str, Any] = {"teams": [{"team_id": "t", "spend": 1.0}], "total": 1}
            return httpx.Response(200, json={**body, "page": 1, "total_pages": 1})
        if path == TAG_DAILY:
            status, tags = self.tags
            return httpx.Response(status, content=json.dumps(tags).encode())
        metrics = {"spend": 1.0, "prompt_tokens": 1, "completion_tokens": 1, "api_requests": 1}
        key = {"metrics": metrics, "metadata": {"team_id": "t"}}
        entry = {"metrics": metrics, "api_key_breakdown": {"k": key}}
        breakdown = {"entities": {"t": entry}, "models": {}, "model_groups": {"m": entry}}
        day = {"date": "2026-11-19", "breakdown": breakdown}
        return httpx.Response(200, json={"results": [day], "metadata": {"total_pages": 1}})


def _read(proxy: _Proxy, client: httpx.Client) -> dict[str, float]:
    cfg = LiteLLMConfig(url="http://litellm:4000", api_key_env="LITELLM_TEST_KEY")
    reading = Reading.open(NOW, ZoneInfo("UTC"))
    snapshot = fetch(client, cfg, LiteLLMShared(reads_tags=True), reading)
    return dict(snapshot.tags)


@pytest.mark.parametrize(
    "gone",
    [
        (404, {"detail": "Not Found"}),
        (200, {"results": [], "metadata": {"page": 1, "total_pages": 0}}),
    ],
    ids=["404", "empty"],
)
def test_tag_activity_gone_after_data_waits_for_a_second_read(
    gone: tuple[int, dict[str, Any]],
) -> None:
    proxy = _Proxy()
    cfg = LiteLLMConfig(url="http://litellm:4000", api_key_env="LITELLM_TEST_KEY")
    with build_client(cfg, transport=httpx.MockTransport(proxy)) as client:
        assert _read(proxy, client) == {"p:a": 1.0}
        proxy.tags = gone
        with pytest.raises(UpstreamIncomplete, match="the tag activity came back empty"):
            _read(proxy, client)
        assert _read(proxy, client) == {}  # the same twice: the proxy has no tag spend now


def test_a_proxy_without_tag_activity_from_the_start_has_no_tags() -> None:
    proxy = _Proxy()
    proxy.tags = (404, {"detail": "Not Found"})
    cfg = LiteLLMConfig(url="http://litellm:4000", api_key_env="LITELLM_TEST_KEY")
    with build_client(cfg, transport=httpx.MockTransport(proxy)) as client:
        assert _read(proxy, client) == {}


def test_a_dropped_tag_record_fails_the_read() -> None:
    # Recomputed without it, the dimension split would move spend between its values.
    proxy = _Proxy()
    body = _page({"2026-11-19": {"p:a": 1.0, "p:b": 2.0}}, 1, 1)
    body["results"][0]["breakdown"]["entities"]["p:b"]["metrics"]["spend"] = None
    proxy.tags = (200, body)
    cfg = LiteLLMConfig(url="http://litellm:4000", api_key_env="LITELLM_TEST_KEY")
    with (
        build_client(cfg, transport=httpx.MockTransport(proxy)) as client,
        pytest.raises(RecordsDropped, match="tag rows") as err,
    ):
        _read(proxy, client)
    assert err.value.dropped == {"missing_field": 1}

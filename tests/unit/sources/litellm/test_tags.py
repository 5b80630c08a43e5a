"""LiteLLM tag spend: `/tag/daily/activity` pages summed per tag, bad tags dropped and counted."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import httpx
import pytest

from exporter.config.schema import LiteLLMConfig
from exporter.errors import UpstreamPayloadError
from exporter.sources.checks import Tally
from exporter.sources.litellm.cache import MonthDates
from exporter.sources.litellm.source import build_client
from exporter.sources.litellm.tags import TAG_DAILY, read_tag_spend, tag_spend

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
    # A key breakdown that does not parse is metadata: left out, the tag's total kept.
    entities["ok"]["api_key_breakdown"]["hash-a"]["metadata"]["team_id"] = 7
    tally = Tally()
    totals, by_team = tag_spend(json.loads(json.dumps(body)), tally)
    assert totals == {"ok": 1.0}
    assert by_team == pytest.approx({("", "ok"): 1 / 3})
    assert sum(tally.values()) == 3


def test_a_body_without_results_is_a_payload_error() -> None:
    with pytest.raises(UpstreamPayloadError):
        tag_spend({"data": []}, Tally())

"""LiteLLM model names: usage is named by model_group, the public name, with its deployment."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from exporter.config.schema import Config, LiteLLMConfig, SourcesConfig
from exporter.sources.litellm.source import KIND, build_client
from exporter.sources.reading import Reading
from tests.conftest import UTC_ZONE

KEY = "sk-test-viewer-names"
NOW = datetime(2026, 11, 19, 13, 30, tzinfo=UTC)
LLAMA = "hosted_vllm/meta-llama/Meta-Llama-3-70B-Instruct"
AZURE = "azure/gpt-4o-2024-08-06"

# (team_id, date, provider model, model group, prompt, completion, requests, spend): rows of
# LiteLLM_DailyTeamSpend. AZURE serves two public names, "gpt-4o" and "gpt-4o-batch".
ROWS: list[tuple[str | None, str, str, str | None, int, int, int, float]] = [
    ("t-research", "2026-11-01", LLAMA, "llama-3-70b", 1000, 200, 4, 0.5),
    ("t-growth", "2026-11-01", LLAMA, "llama-3-70b", 300, 100, 2, 0.2),
    ("t-research", "2026-11-01", AZURE, "gpt-4o", 50, 20, 1, 1.25),
    ("t-research", "2026-11-02", AZURE, "gpt-4o-batch", 500, 100, 3, 3.0),
    ("t-growth", "2026-11-02", AZURE, "gpt-4o", 7, 3, 1, 0.1),
    (None, "2026-11-02", AZURE, "gpt-4o", 10, 5, 1, 0.25),
    (None, "2026-11-01", AZURE, "gpt-4o-batch", 40, 10, 2, 0.5),
]
ALIASES = {"t-research": "Research", "t-growth": "Growth"}


@pytest.fixture(autouse=True)
def _key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_NAMES_KEY", KEY)


def _metrics(rows: list[Any]) -> dict[str, Any]:
    # Key order and extra fields unlike our fake's; requests come after spend.
    return {
        "spend": sum(r[7] for r in rows),
        "api_requests": sum(r[6] for r in rows),
        "completion_tokens": sum(r[5] for r in rows),
        "prompt_tokens": sum(r[4] for r in rows),
        "ptu_hours": 0.0,
    }


def _group(rows: list[Any], index: int, *, groups: str) -> dict[str, Any]:
    out: dict[str, list[Any]] = {}
    for r in rows:
        out.setdefault(r[index] if r[index] is not None else "Unassigned", []).append(r)
    if index == 3 and groups == "names":
        return {name: {} for name in out}  # the trimmed shape: names, no metrics
    return {
        name: {"metrics": _metrics(rs), "metadata": {"team_alias": ALIASES.get(name)}}
        for name, rs in out.items()
    }


def _route(groups: str = "metrics") -> tuple[Callable[[httpx.Request], httpx.Response], list[Any]]:
    seen: list[dict[str, str]] = []

    def route(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v2/team/list":
            teams = [{"team_id": t, "team_alias": a, "spend": 0.0} for t, a in ALIASES.items()]
            return httpx.Response(
                200, json={"teams": teams, "total": 2, "page": 1, "total_pages": 1}
            )
        params = dict(request.url.params)
        seen.append(params)
        model, team = params.get("model"), params.get("team_ids")
        rows = [r for r in ROWS if (not model or r[2] == model) and (not team or r[0] == team)]
        results = []
        for day in sorted({r[1] for r in rows}):  # oldest first, unlike the fake
            day_rows = [r for r in rows if r[1] == day]
            breakdown: dict[str, Any] = {
                "entities": _group(day_rows, 0, groups=groups),
                "models": _group(day_rows, 2, groups=groups),
            }
            if groups != "absent":
                breakdown["model_groups"] = _group(day_rows, 3, groups=groups)
            results.append({"date": day, "metrics": _metrics(day_rows), "breakdown": breakdown})
        return httpx.Response(200, json={"results": results, "metadata": {"total_spend": 0}})

    return route, seen


def _fetch(route: Callable[[httpx.Request], httpx.Response]) -> dict[Any, tuple[Any, ...]]:
    cfg = LiteLLMConfig(url="http://litellm:4000", api_key_env="LITELLM_NAMES_KEY", currency="EUR")
    with build_client(cfg, transport=httpx.MockTransport(route)) as client:
        snapshot = KIND.fetch_from_config(
            client,
            Config(sources=SourcesConfig(litellm=cfg)),
            Reading.open(NOW, UTC_ZONE),
        )
    assert snapshot.dropped == {}
    return {
        (u.team_id, u.model, u.deployment): (
            u.spend,
            u.prompt_tokens,
            u.completion_tokens,
            u.requests,
        )
        for u in snapshot.usage
    }


def test_usage_is_named_by_model_group_and_split_when_a_deployment_serves_two() -> None:
    route, seen = _route()
    got = _fetch(route)
    assert got == {
        ("t-research", "llama-3-70b", LLAMA): (0.5, 1000, 200, 4),
        ("t-growth", "llama-3-70b", LLAMA): (0.2, 300, 100, 2),
        ("t-research", "gpt-4o", AZURE): (1.25, 50, 20, 1),
        ("t-research", "gpt-4o-batch", AZURE): (3.0, 500, 100, 3),
        ("t-growth", "gpt-4o", AZURE): (0.1, 7, 3, 1),
        # No team: what each group has left after the named teams (67 - 50 - 7 = 10 prompt).
        (None, "gpt-4o", AZURE): (pytest.approx(0.25), 10, 5, 1),
        (None, "gpt-4o-batch", AZURE): (0.5, 40, 10, 2),
    }
    # Only the deployment behind two groups needed reads per team.
    per_team = sorted((p["model"], p["team_ids"]) for p in seen if "team_ids" in p)
    assert per_team == [(AZURE, "t-growth"), (AZURE, "t-research")]


def test_a_proxy_without_model_groups_names_usage_by_provider_model() -> None:
    route, _ = _route("absent")
    got = _fetch(route)
    assert got[("t-growth", LLAMA, LLAMA)] == (0.2, 300, 100, 2)
    assert got[(None, AZURE, AZURE)] == (0.75, 50, 15, 3)


def test_groups_without_metrics_cannot_split_and_fall_back_to_the_provider_model() -> None:
    route, _ = _route("names")
    got = _fetch(route)
    # One group per deployment needs no metrics; two groups without them cannot be split.
    assert got[("t-research", "llama-3-70b", LLAMA)] == (0.5, 1000, 200, 4)
    assert got[("t-research", AZURE, AZURE)] == (4.25, 550, 120, 4)
    assert got[(None, AZURE, AZURE)] == (0.75, 50, 15, 3)
    assert {model for (_, model, _) in got} == {"llama-3-70b", AZURE}

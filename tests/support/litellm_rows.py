"""A scripted LiteLLM proxy built from hand-written daily rows, for the LiteLLM read tests.

Its habits differ from chargeback_demo's fake on purpose: results oldest first, metrics keys in
another order with extra fields, spend sometimes an integer, key metadata from a key table
"now" (so a key that moved team names its new team), and optional key breakdowns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import httpx


@dataclass(frozen=True)
class Row:
    """One row of LiteLLM_DailyTeamSpend: team x date x key x provider model (x group)."""

    team_id: str | None
    date: str
    key: str
    model: str
    group: str
    prompt: int
    completion: int
    requests: int
    spend: float


@dataclass
class RowProxy:
    """Answers /v2/team/list and the aggregated daily endpoint from `rows`, filtered as the
    real query filters (dates inclusive, `model`, `team_ids`)."""

    rows: list[Row]
    key_teams: dict[str, str] = field(default_factory=dict)  # the key table now
    keys: bool = True  # False: a proxy whose breakdowns carry no api_key_breakdown
    seen: list[httpx.URL] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request.url)
        if request.url.path == "/v2/team/list":
            return httpx.Response(200, json={"teams": [], "total": 0, "page": 1, "total_pages": 1})
        if request.url.path != "/team/daily/activity/aggregated":
            return httpx.Response(404, json={"detail": "Not Found"})
        params = request.url.params
        teams = set(params["team_ids"].split(",")) if "team_ids" in params else None
        rows = [
            r
            for r in self.rows
            if params["start_date"] <= r.date <= params["end_date"]
            and (not params.get("model") or r.model == params["model"])
            and (teams is None or r.team_id in teams)
        ]
        dates = sorted({r.date for r in rows})
        results = [self._day(d, [r for r in rows if r.date == d]) for d in dates]
        return httpx.Response(200, json={"results": results, "metadata": {"total_pages": 1}})

    def _day(self, day: str, rows: list[Row]) -> dict[str, Any]:
        return {
            "date": day,
            "metrics": _metrics(rows),
            "breakdown": {
                "providers": {"openai": {"metrics": _metrics(rows)}},
                "entities": self._group(rows, lambda r: r.team_id or "Unassigned"),
                "models": self._group(rows, lambda r: r.model),
                "model_groups": self._group(rows, lambda r: r.group),
            },
        }

    def _group(self, rows: list[Row], name: Callable[[Row], str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for n in sorted({name(r) for r in rows}):
            mine = [r for r in rows if name(r) == n]
            entry: dict[str, Any] = {"metrics": _metrics(mine), "metadata": {}}
            if self.keys:
                entry["api_key_breakdown"] = {
                    k: {
                        "metadata": {"key_alias": None, "team_id": self.key_teams.get(k)},
                        "metrics": _metrics(r for r in mine if r.key == k),
                    }
                    for k in sorted({r.key for r in mine})
                }
            out[n] = entry
        return out


def _metrics(rows: Iterable[Row]) -> dict[str, Any]:
    rows = list(rows)
    spend = sum(r.spend for r in rows)
    return {
        "api_requests": sum(r.requests for r in rows),
        "total_tokens": sum(r.prompt + r.completion for r in rows),
        "completion_tokens": sum(r.completion for r in rows),
        "prompt_tokens": sum(r.prompt for r in rows),
        "cache_read_input_tokens": 0,
        "spend": int(spend) if spend == int(spend) else spend,
        "successful_requests": sum(r.requests for r in rows),
    }


def date_runs(urls: Iterable[httpx.URL]) -> list[tuple[str, str]]:
    """The daily reads as runs of consecutive dates: the source reads one UTC date per call.

    A paged date (several calls for one date) counts once; each run is one refresh's range.
    """
    runs: list[tuple[str, str]] = []
    for url in urls:
        params = url.params
        if "daily" not in url.path or "model" in params or "team_ids" in params:
            continue
        if params.get("page", "1") != "1":
            continue  # the next page of the same date
        start, end = params["start_date"], params["end_date"]
        assert start == end, f"a read of {start}..{end}, not of one date"
        if runs and _next_date(runs[-1][1]) == start:
            runs[-1] = (runs[-1][0], start)
        else:
            runs.append((start, start))
    return runs


def _next_date(day: str) -> str:
    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()

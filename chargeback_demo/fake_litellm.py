"""A fake LiteLLM proxy: team list, daily team activity (row-paged) and Bearer auth, as 1.108 does.

`/tag/daily/activity` answers the same way with request tags as the entities (a row counts once
under each tag its traffic carries), each with its API-key breakdown naming the keys' teams.

The aggregated endpoint takes `timezone` (UTC minus local, in minutes) with
`include_current_utc_day`, as the proxy's `_adjust_dates_for_timezone` does (live_end).

Usage comes from the cluster model: one DB-like row per team x UTC date x API key x model, with
the day's tokens rounded to whole tokens (LiteLLM stores bigints) and spend priced at the
traffic's declared per-token prices. History starts on the 1st of the previous month.

As in a real proxy, a row's `model` is the provider model of the deployment that served it and
its `model_group` the public name teams call (the cluster's model names): the `model` filter and
the `models` breakdown use the first, the `model_groups` breakdown the second.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from chargeback_demo.cluster import Cluster, LlmTraffic
from chargeback_demo.httpfake import FakeRequest, FakeResponse, json_response
from exporter.clock import Clock

__all__ = [
    "FakeRow",
    "deployment",
    "history_start",
    "live_end",
    "make_handler",
    "rows_between",
]

Handler = Callable[[FakeRequest], FakeResponse]
DAY = timedelta(days=1)
_MAX_TEAM_PAGE = 100
_NS = uuid.UUID("6f1d7c3e-2b8a-4c55-9d0e-1a2b3c4d5e6f")
# The deployments behind the cluster's public model names, as a proxy's model_list maps them.
_DEPLOYMENTS = {
    "gpt-4o": ("openai", "gpt-4o-2024-08-06"),
    "llama-3-70b": ("hosted_vllm", "hosted_vllm/meta-llama/Meta-Llama-3-70B-Instruct"),
}


def deployment(model_group: str) -> tuple[str, str]:
    """The provider and provider model serving a public model name."""
    return _DEPLOYMENTS.get(model_group, ("hosted_vllm", f"hosted_vllm/{model_group}"))


@dataclass(frozen=True)
class FakeRow:
    """One row of LiteLLM_DailyTeamSpend."""

    id: str
    team_id: str | None
    date: str
    api_key: str
    model: str  # the provider model, e.g. "hosted_vllm/meta-llama/Meta-Llama-3-70B-Instruct"
    model_group: str  # the public name, e.g. "llama-3-70b"
    provider: str
    prompt_tokens: int
    completion_tokens: int
    spend: float
    api_requests: int


def history_start(now: datetime) -> datetime:
    """When the fake proxy's spend history begins: the 1st of the month before `now` (UTC)."""
    first = now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return (first - DAY).replace(day=1)


def rows_between(cluster: Cluster, first: date, last: date, now: datetime) -> list[FakeRow]:
    """Non-empty daily rows dated in [first, last] up to `now`, ordered date desc, id asc."""
    rows: list[FakeRow] = []
    day = max(first, history_start(now).date())
    while day <= min(last, now.astimezone(UTC).date()):
        start = datetime.combine(day, time(), UTC)
        rows.extend(_day_rows(cluster, day, start, min(start + DAY, now)))
        day += DAY
    rows.sort(key=lambda r: r.id)
    rows.sort(key=lambda r: r.date, reverse=True)
    return rows


def _day_rows(cluster: Cluster, day: date, start: datetime, end: datetime) -> Iterable[FakeRow]:
    sums: dict[LlmTraffic, list[float]] = {}
    for traffic, _, hours in cluster.llm_usage(start, end):
        acc = sums.setdefault(traffic, [0.0, 0.0, 0.0])
        acc[0] += traffic.prompt_per_hour * hours
        acc[1] += traffic.completion_per_hour * hours
        acc[2] += traffic.requests_per_hour * hours
    for traffic, (prompt_f, completion_f, requests_f) in sums.items():
        prompt, completion = round(prompt_f), round(completion_f)
        if prompt == 0 and completion == 0:
            continue
        spend = prompt * traffic.input_cost_per_token + completion * traffic.output_cost_per_token
        name = f"{day.isoformat()}/{traffic.team_id}/{traffic.model}"
        provider, model = deployment(traffic.model)
        yield FakeRow(
            id=str(uuid.uuid5(_NS, name)),
            team_id=traffic.team_id,
            date=day.isoformat(),
            api_key=_key_hash(traffic.team_id),
            model=model,
            model_group=traffic.model,
            provider=provider,
            prompt_tokens=prompt,
            completion_tokens=completion,
            spend=spend,
            api_requests=round(requests_f),
        )


def _key_hash(team_id: str | None) -> str:
    # LiteLLM stores keys as the sha256 hex of the raw key; one app key per team here.
    return hashlib.sha256(f"sk-app-{team_id or 'no-team'}".encode()).hexdigest()


def make_handler(
    cluster: Cluster,
    clock: Clock,
    *,
    api_key: str = "sk-demo-viewer-key",
    aggregated: bool = True,
    version: str = "1.108",
) -> Handler:
    """A request handler speaking LiteLLM's team and daily-activity endpoints for the cluster."""
    proxy = _Proxy(cluster, clock, api_key, aggregated and version == "1.108", version)
    return proxy.handle


class _Proxy:
    def __init__(
        self, cluster: Cluster, clock: Clock, api_key: str, aggregated: bool, version: str
    ) -> None:
        self.cluster = cluster
        self.clock = clock
        self.api_key = api_key
        self.aggregated = aggregated
        self.version = version
        self._teams: tuple[datetime, list[dict[str, Any]]] | None = None

    def handle(self, request: FakeRequest) -> FakeResponse:
        if request.path == "/health/liveliness":
            return json_response(200, "I'm alive!")
        routes: dict[str, Callable[[FakeRequest], FakeResponse]] = {
            "/v2/team/list": self.team_list,
            "/team/daily/activity": self.daily,
            "/tag/daily/activity": self.tag_daily,
        }
        if self.aggregated:
            routes["/team/daily/activity/aggregated"] = self.daily_aggregated
        route = routes.get(request.path)
        if route is None or request.method != "GET":
            return json_response(404, {"detail": "Not Found"})
        denied = self.auth(request.headers)
        return denied if denied is not None else route(request)

    def auth(self, headers: Mapping[str, str]) -> FakeResponse | None:
        if "x-litellm-api-key" in headers:
            key = headers["x-litellm-api-key"].removeprefix("Bearer ").strip()
        elif "authorization" in headers:
            value = headers["authorization"]
            if not value.lower().startswith("bearer "):
                return _proxy_error(
                    401, "Malformed API Key passed in. Ensure Key has `Bearer ` prefix."
                )
            key = value[7:].strip()
        else:
            return _proxy_error(401, "Authentication Error, No api key passed in.")
        if key != self.api_key:
            return _proxy_error(
                401,
                "Authentication Error, Invalid proxy server token passed. "
                "Unable to find token in cache or `LiteLLM_VerificationTokenTable`",
            )
        return None

    # --- /v2/team/list -------------------------------------------------------------------------

    def team_list(self, request: FakeRequest) -> FakeResponse:
        page, problem = _int_query(request, "page", 1, low=1)
        size, problem2 = _int_query(request, "page_size", 10, low=1, high=_MAX_TEAM_PAGE)
        if problem or problem2:
            return json_response(422, {"detail": [p for p in (problem, problem2) if p]})
        teams = self.teams()
        total = len(teams)
        chunk = teams[(page - 1) * size : page * size]
        return json_response(
            200,
            {
                "teams": chunk,
                "total": total,
                "page": page,
                "page_size": size,
                "total_pages": math.ceil(total / size),
            },
        )

    def teams(self) -> list[dict[str, Any]]:
        now = self.clock().astimezone(UTC)
        # Every page of one listing reads the same instant's teams: computed once per instant.
        if self._teams is not None and self._teams[0] == now:
            return self._teams[1]
        teams = self._teams_at(now)
        self._teams = (now, teams)
        return teams

    def _teams_at(self, now: datetime) -> list[dict[str, Any]]:
        month = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        rows = rows_between(self.cluster, history_start(now).date(), now.date(), now)
        # Each team's spend since history began and since the 1st, in one pass over the rows
        # (added in the rows' order, as a sum per team would).
        this_month = month.date().isoformat()
        spent: dict[str | None, list[float]] = {}
        for r in rows:
            acc = spent.setdefault(r.team_id, [0.0, 0.0])
            acc[0] += r.spend
            if r.date >= this_month:
                acc[1] += r.spend
        out = []
        for index, (team_id, alias, max_budget, soft_budget) in enumerate(self.cluster.llm_teams):
            # A "30d" budget snaps to the 1st of the month: spend counts from this month's 1st.
            windowed = max_budget is not None
            spend = spent.get(team_id, [0.0, 0.0])[1 if windowed else 0]
            out.append(self.team_item(index, team_id, alias, spend, max_budget, soft_budget, now))
        # LiteLLM's default order is created_at desc; created_at grows with the index here.
        return list(reversed(out))

    def team_item(
        self,
        index: int,
        team_id: str,
        alias: str | None,
        spend: float,
        max_budget: float | None,
        soft_budget: float | None,
        now: datetime,
    ) -> dict[str, Any]:
        created = history_start(now) - timedelta(days=30 - index)
        next_month = (now.replace(day=28) + timedelta(days=4)).replace(
            day=1, hour=0, minute=0, second=0, microsecond=0
        )
        item: dict[str, Any] = {
            "team_id": team_id,
            "team_alias": alias,
            "organization_id": None,
            "max_budget": max_budget,
            "soft_budget": soft_budget,
            "spend": spend,
            "budget_duration": "30d" if max_budget is not None else None,
            "budget_reset_at": _stamp(next_month) if max_budget is not None else None,
            "tpm_limit": None,
            "rpm_limit": None,
            "tpd_limit": None,
            "budget_limits": None,
            "models": [],
            "blocked": False,
            "members_with_roles": [],
            "metadata": {},
            "model_spend": {},
            "created_at": _stamp(created),
            "updated_at": _stamp(now),
            "members_count": 0,
            "keys_count": 1,
        }
        if self.version == "1.74":
            for key in ("soft_budget", "tpd_limit", "budget_limits", "members_count", "keys_count"):
                del item[key]
        return item

    # --- /team/daily/activity ------------------------------------------------------------------

    def daily(self, request: FakeRequest) -> FakeResponse:
        rows_or_error = self.filtered_rows(request)
        if isinstance(rows_or_error, FakeResponse):
            return rows_or_error
        rows = rows_or_error
        page, problem = _int_query(request, "page", 1)
        size, problem2 = _int_query(request, "page_size", 10)
        if problem or problem2:
            return json_response(422, {"detail": [p for p in (problem, problem2) if p]})
        if page < 1 or size < 1:
            return json_response(400, {"detail": {"error": "page and page_size must be >= 1"}})
        chunk = rows[(page - 1) * size : page * size]
        paging = {
            "page": page,
            "total_pages": -(-len(rows) // size),
            "has_more": page * size < len(rows),
        }
        return json_response(200, self.activity(chunk, paging))

    def tag_daily(self, request: FakeRequest) -> FakeResponse:
        """`/tag/daily/activity`: the same row paging, a row once per request tag it carries."""
        rows_or_error = self.filtered_rows(request)
        if isinstance(rows_or_error, FakeResponse):
            return rows_or_error
        tags = {(t.team_id, t.model): t.tags for t in self.cluster.llm_traffic}
        tagged = [
            (tag, r) for r in rows_or_error for tag in tags.get((r.team_id, r.model_group), ())
        ]
        page, problem = _int_query(request, "page", 1)
        size, problem2 = _int_query(request, "page_size", 10)
        if problem or problem2:
            return json_response(422, {"detail": [p for p in (problem, problem2) if p]})
        if page < 1 or size < 1:
            return json_response(400, {"detail": {"error": "page and page_size must be >= 1"}})
        chunk = tagged[(page - 1) * size : page * size]
        by_date: dict[str, dict[str, list[FakeRow]]] = {}
        for tag, row in chunk:
            by_date.setdefault(row.date, {}).setdefault(tag, []).append(row)
        results = [
            {
                "date": d,
                "metrics": _metrics(r for rs in by_tag.values() for r in rs),
                "breakdown": {
                    "entities": {
                        tag: {
                            "metrics": _metrics(rs),
                            "metadata": {},
                            "api_key_breakdown": _key_breakdown(rs),
                        }
                        for tag, rs in sorted(by_tag.items())
                    }
                },
            }
            for d, by_tag in sorted(by_date.items(), reverse=True)
        ]
        metadata = {
            "total_spend": sum(r.spend for _, r in chunk),
            "page": page,
            "total_pages": -(-len(tagged) // size),
            "has_more": page * size < len(tagged),
        }
        return json_response(200, {"results": results, "metadata": metadata})

    def daily_aggregated(self, request: FakeRequest) -> FakeResponse:
        offset, problem = _int_query(request, "timezone", 0)
        if problem:
            return json_response(422, {"detail": [problem]})
        live = request.arg("include_current_utc_day") in ("true", "True", "1")
        zone = offset if live and request.arg("timezone") is not None else None
        rows_or_error = self.filtered_rows(request, zone)
        if isinstance(rows_or_error, FakeResponse):
            return rows_or_error
        paging = {"page": 1, "total_pages": 1, "has_more": False}
        return json_response(200, self.activity(rows_or_error, paging))

    def filtered_rows(
        self, request: FakeRequest, offset_minutes: int | None = None
    ) -> list[FakeRow] | FakeResponse:
        start, end = request.arg("start_date"), request.arg("end_date")
        if not start or not end:
            return json_response(
                400, {"detail": {"error": "Please provide start_date and end_date"}}
            )
        try:
            first, last = date.fromisoformat(start), date.fromisoformat(end)
        except ValueError:
            return json_response(400, {"detail": {"error": "Invalid date format, use YYYY-MM-DD"}})
        if offset_minutes is not None:
            last = live_end(last, offset_minutes, self.clock())
        rows = rows_between(self.cluster, first, last, self.clock())
        team_ids = _csv(request.arg("team_ids"))
        excluded = _csv(request.arg("exclude_team_ids"))
        model, key = request.arg("model"), request.arg("api_key")
        return [
            r
            for r in rows
            if (team_ids is None or r.team_id in team_ids)
            # SQL NOT IN drops NULL team ids too, as the real query does.
            and (excluded is None or (r.team_id is not None and r.team_id not in excluded))
            and (not model or r.model == model)
            and (not key or r.api_key == key)
        ]

    def activity(self, rows: list[FakeRow], paging: Mapping[str, Any]) -> dict[str, Any]:
        aliases = {t[0]: t[1] for t in self.cluster.llm_teams}
        by_date: dict[str, list[FakeRow]] = {}
        for row in rows:
            by_date.setdefault(row.date, []).append(row)
        results = [
            {"date": d, "metrics": _metrics(rs), "breakdown": _breakdown(rs, aliases)}
            for d, rs in sorted(by_date.items(), reverse=True)
        ]
        total = _metrics(rows)
        metadata = {f"total_{k}": v for k, v in total.items() if k != "total_tokens"}
        metadata["total_tokens"] = total["total_tokens"]
        metadata.update(paging)
        metadata.update({"api_key_limit": None, "total_api_keys": None})
        return {"results": results, "metadata": metadata}


def live_end(end: date, offset_minutes: int, now: datetime) -> date:
    """The last UTC date a range ending on `end` (a date of the caller's zone) reads.

    LiteLLM's dates are UTC dates and `timezone` moves no row: interior dates pass through. It
    only extends a range that reaches the caller's today to today's UTC date, which west of UTC
    already holds part of the caller's today (the rest of that date is the empty future).
    `offset_minutes` is UTC minus local, JavaScript's getTimezoneOffset sign.
    """
    utc = now.astimezone(UTC)
    caller_today = (utc - timedelta(minutes=offset_minutes)).date()
    return end if end < caller_today else max(end, utc.date())


def _key_breakdown(rows: list[FakeRow]) -> dict[str, Any]:
    """Per API key (in the order keys first appear), its rows' metrics and its team."""
    by_key: dict[str, list[FakeRow]] = {}
    for row in rows:
        by_key.setdefault(row.api_key, []).append(row)
    return {
        key: {
            "metrics": _metrics(rs),
            # The last row's team, as the per-row comprehension this replaces kept.
            "metadata": {"key_alias": None, "team_id": rs[-1].team_id},
        }
        for key, rs in by_key.items()
    }


def _breakdown(rows: list[FakeRow], aliases: Mapping[str, str | None]) -> dict[str, Any]:
    def group(key: Callable[[FakeRow], str], meta: Callable[[str], dict[str, Any]]) -> Any:
        groups: dict[str, list[FakeRow]] = {}
        for row in rows:
            groups.setdefault(key(row), []).append(row)
        return {
            name: {
                "metrics": _metrics(rs),
                "metadata": meta(name),
                "api_key_breakdown": _key_breakdown(rs),
            }
            for name, rs in groups.items()
        }

    def entity_meta(name: str) -> dict[str, Any]:
        return {} if name == "Unassigned" else {"team_alias": aliases.get(name)}

    return {
        "entities": group(lambda r: r.team_id or "Unassigned", entity_meta),
        "models": group(lambda r: r.model, lambda _: {}),
        "model_groups": group(lambda r: r.model_group, lambda _: {}),
        "providers": group(lambda r: r.provider, lambda _: {}),
        "api_keys": {r.api_key: {"metrics": _metrics([r]), "metadata": {}} for r in rows},
        "endpoints": {},
        "mcp_servers": {},
    }


def _metrics(rows: Iterable[FakeRow]) -> dict[str, Any]:
    rows = list(rows)
    prompt = sum(r.prompt_tokens for r in rows)
    completion = sum(r.completion_tokens for r in rows)
    requests = sum(r.api_requests for r in rows)
    return {
        "spend": sum(r.spend for r in rows),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "api_requests": requests,
        "successful_requests": requests,
        "failed_requests": 0,
    }


def _proxy_error(status: int, message: str) -> FakeResponse:
    return json_response(
        status,
        {"error": {"message": message, "type": "auth_error", "param": "None", "code": str(status)}},
    )


def _int_query(
    request: FakeRequest,
    name: str,
    default: int,
    *,
    low: int | None = None,
    high: int | None = None,
) -> tuple[int, dict[str, Any] | None]:
    """Parse an int query parameter the way FastAPI validates it (422 detail items)."""
    raw = request.arg(name)
    if raw is None:
        return default, None
    loc = ["query", name]
    try:
        value = int(raw)
    except ValueError:
        msg = "Input should be a valid integer, unable to parse string as an integer"
        return default, {"type": "int_parsing", "loc": loc, "msg": msg, "input": raw}
    if low is not None and value < low:
        msg = f"Input should be greater than or equal to {low}"
        return value, {"type": "greater_than_equal", "loc": loc, "msg": msg, "input": raw}
    if high is not None and value > high:
        msg = f"Input should be less than or equal to {high}"
        return value, {"type": "less_than_equal", "loc": loc, "msg": msg, "input": raw}
    return value, None


def _csv(value: str | None) -> set[str] | None:
    return {v.strip() for v in value.split(",") if v.strip()} if value else None


def _stamp(t: datetime) -> str:
    # The DB keeps naive UTC timestamps; the API prints them with an explicit offset.
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")

"""A fake LiteLLM proxy: team list, daily team activity (row-paged) and Bearer auth, as 1.108 does.

`/tag/daily/activity` answers the same way with request tags as the entities (a row counts once
under each tag its traffic carries), each with its API-key breakdown naming the keys' teams.

The aggregated endpoint takes `timezone` (UTC minus local, in minutes) with
`include_current_utc_day`, as the proxy's `_adjust_dates_for_timezone` does (live_end).

The rows are the cluster's (litellm_rows); the `model` filter and the `models` breakdown use a
row's provider model, the `model_groups` breakdown its public name (litellm_activity).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from chargeback_demo.cluster import Cluster
from chargeback_demo.httpfake import FakeRequest, FakeResponse, json_response
from chargeback_demo.litellm_activity import activity, tag_activity
from chargeback_demo.litellm_rows import FakeRow, history_start, live_end, rows_between
from exporter.clock import Clock

__all__ = ["make_handler"]

Handler = Callable[[FakeRequest], FakeResponse]
_MAX_TEAM_PAGE = 100


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
        rows = self.filtered_rows(request)
        if isinstance(rows, FakeResponse):
            return rows
        paged = _rows_page(request, len(rows))
        if isinstance(paged, FakeResponse):
            return paged
        chunk, paging = paged
        return json_response(200, activity(rows[chunk], paging, self.aliases()))

    def tag_daily(self, request: FakeRequest) -> FakeResponse:
        """`/tag/daily/activity`: the same row paging, a row once per request tag it carries."""
        rows = self.filtered_rows(request)
        if isinstance(rows, FakeResponse):
            return rows
        tags = {(t.team_id, t.model): t.tags for t in self.cluster.llm_traffic}
        tagged = [(tag, r) for r in rows for tag in tags.get((r.team_id, r.model_group), ())]
        paged = _rows_page(request, len(tagged))
        if isinstance(paged, FakeResponse):
            return paged
        chunk, paging = paged
        return json_response(200, tag_activity(tagged[chunk], paging))

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
        return json_response(200, activity(rows_or_error, paging, self.aliases()))

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

    def aliases(self) -> dict[str, str | None]:
        return {t[0]: t[1] for t in self.cluster.llm_teams}


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


def _rows_page(request: FakeRequest, count: int) -> tuple[slice, dict[str, Any]] | FakeResponse:
    """Which of `count` rows the requested page holds, and its paging metadata."""
    page, problem = _int_query(request, "page", 1)
    size, problem2 = _int_query(request, "page_size", 10)
    if problem or problem2:
        return json_response(422, {"detail": [p for p in (problem, problem2) if p]})
    if page < 1 or size < 1:
        return json_response(400, {"detail": {"error": "page and page_size must be >= 1"}})
    paging = {"page": page, "total_pages": -(-count // size), "has_more": page * size < count}
    return slice((page - 1) * size, page * size), paging

"""LiteLLM proxy: team budget state and month-to-date usage per team and model, as typed records.

Endpoints (all GET, `Authorization: Bearer <key>`; a proxy_admin_viewer key is enough):

- `/v2/team/list?page=N&page_size<=100`, paged until `page >= total_pages`: budget state.
- `/team/daily/activity/aggregated?start_date&end_date[&model]` (1.108+, unpaged), or on 404
  `/team/daily/activity?...&page=N&page_size=M`, whose pages cut through raw DB rows so one date
  can sit on two pages: pages are merged by date, summing, never overwriting.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import httpx

from exporter.config import Config, LiteLLMConfig, read_secret
from exporter.errors import UpstreamPayloadError, UpstreamStatusError
from exporter.sources.http import get_json, make_client
from exporter.sources.kind import SourceKind, section

__all__ = [
    "KIND",
    "UNASSIGNED",
    "LiteLLMSnapshot",
    "ModelUsage",
    "TeamBudget",
    "UsageMetrics",
    "build_client",
    "fetch",
    "merge_daily_pages",
    "parse_timestamp",
]

SOURCE = "litellm"
UNASSIGNED = "Unassigned"  # LiteLLM's entity name for rows whose team_id is NULL
TEAM_LIST = "/v2/team/list"
DAILY = "/team/daily/activity"
DAILY_AGGREGATED = "/team/daily/activity/aggregated"
_MAX_PAGES = 10_000  # a proxy that keeps announcing more pages must not loop us forever
_FRACTION = re.compile(r"(\.\d{6})\d+")


@dataclass(frozen=True)
class TeamBudget:
    """One LiteLLM team's budget window: spend since its last reset, caps, and the next reset."""

    team_id: str
    alias: str | None
    spend: float | None
    max_budget: float | None  # None: no cap (never 0)
    soft_budget: float | None
    budget_reset_at: datetime | None


@dataclass(frozen=True)
class UsageMetrics:
    """Summed daily metrics; `spend` is None when the proxy did not report it."""

    spend: float | None
    prompt_tokens: int
    completion_tokens: int
    requests: int

    def plus(self, other: UsageMetrics) -> UsageMetrics:
        """The sum of two metric sets; an unknown spend stays unknown."""
        spend = None if self.spend is None or other.spend is None else self.spend + other.spend
        return UsageMetrics(
            spend,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.requests + other.requests,
        )


ZERO = UsageMetrics(0.0, 0, 0, 0)


@dataclass(frozen=True)
class ModelUsage:
    """Month-to-date use of one model by one LiteLLM team (`team_id` None: no team)."""

    team_id: str | None
    alias: str | None
    model: str
    spend: float | None  # None: unknown (older proxy), not zero
    prompt_tokens: int
    completion_tokens: int
    requests: int


@dataclass(frozen=True)
class LiteLLMSnapshot:
    """Everything one refresh read from LiteLLM: team budgets, and this month's usage."""

    teams: tuple[TeamBudget, ...]
    usage: tuple[ModelUsage, ...]


def build_client(
    cfg: LiteLLMConfig, *, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    """The one client for the proxy; the key leaves its SecretStr only to become the header."""
    key = read_secret(cfg.api_key_env, cfg.api_key_file)
    return make_client(
        cfg.url,
        cfg.timeout,
        headers={"Authorization": f"Bearer {key.get_secret_value()}"},
        ca_file=cfg.ca_file,
        transport=transport,
    )


def fetch(client: httpx.Client, config: Config, now: datetime) -> LiteLLMSnapshot:
    """Read team budgets and this month's usage per team and model.

    The month runs from the 1st to today in UTC, the dates LiteLLM keys its daily rows by.
    """
    cfg = section(config.sources.litellm, SOURCE)
    today = now.astimezone(UTC).date()
    start = today.replace(day=1)
    try:
        teams = tuple(_team_pages(client, cfg.page_size))
        usage = tuple(_usage(client, cfg, start, today, teams))
    except UpstreamStatusError as exc:
        raise _explained(exc, client) from None
    return LiteLLMSnapshot(teams, usage)


def parse_timestamp(value: object) -> datetime | None:
    """Parse LiteLLM's timestamps leniently: `Z`, `+00:00` or naive (UTC), any fraction digits."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise UpstreamPayloadError(f"{SOURCE}: expected a timestamp string, got {value!r}"[:200])
    text = _FRACTION.sub(r"\1", value.strip())
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise UpstreamPayloadError(f"{SOURCE}: bad timestamp {value!r}"[:200]) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


# --- team list -------------------------------------------------------------------------------


def _team_pages(client: httpx.Client, page_size: int) -> Iterator[TeamBudget]:
    for body in _pages(client, TEAM_LIST, {"page_size": str(min(page_size, 100))}, top=True):
        teams = body.get("teams")
        if not isinstance(teams, list):
            raise _shape(TEAM_LIST, "a list under 'teams'", teams)
        for item in teams:
            yield _team(item)


def _team(item: object) -> TeamBudget:
    if not isinstance(item, dict) or not isinstance(item.get("team_id"), str):
        raise _shape(TEAM_LIST, "a team object with a string team_id", item)
    alias = item.get("team_alias")
    return TeamBudget(
        team_id=item["team_id"],
        alias=alias if isinstance(alias, str) else None,
        spend=_number(item, "spend", TEAM_LIST),
        max_budget=_number(item, "max_budget", TEAM_LIST),
        soft_budget=_number(item, "soft_budget", TEAM_LIST),
        budget_reset_at=parse_timestamp(item.get("budget_reset_at")),
    )


# --- daily activity --------------------------------------------------------------------------

# Per (team, model) figures: the daily breakdowns are one-dimensional. `entities` is per team and
# `models` per model; the `api_key_breakdown` under each could be crossed through the key, but a
# key's team is read from the key table *now*, not from the row, so a key that changed team (or
# was deleted) would put tokens on the wrong team. Filtering by `team_ids` would be exact for
# named teams but cannot select the NULL-team rows LiteLLM shows as "Unassigned". Filtering by
# `model` can: the same row-level query, restricted to one model, whose `entities` breakdown is
# then exactly team x model, Unassigned included. So we ask once unfiltered to learn which models
# were used this month, then once per model (still paged on older proxies).


def _usage(
    client: httpx.Client,
    cfg: LiteLLMConfig,
    start: date,
    end: date,
    teams: tuple[TeamBudget, ...],
) -> Iterator[ModelUsage]:
    aliases = {t.team_id: t.alias for t in teams}
    base = {"start_date": start.isoformat(), "end_date": end.isoformat()}
    reader = _reader(client, cfg, base)
    models = sorted({m for day in reader(None).values() for m in day.get("models", {})})
    for model in models:
        totals = _total_over_dates(reader(model), "entities")
        for entity in sorted(totals):
            metrics, alias = totals[entity]
            team_id = None if entity == UNASSIGNED else entity
            if alias is None and team_id is not None:
                alias = aliases.get(team_id)
            yield ModelUsage(
                team_id,
                alias,
                model,
                metrics.spend,
                metrics.prompt_tokens,
                metrics.completion_tokens,
                metrics.requests,
            )


_Merged = dict[str, dict[str, dict[str, tuple[UsageMetrics, str | None]]]]


def _reader(
    client: httpx.Client, cfg: LiteLLMConfig, base: Mapping[str, str]
) -> Callable[[str | None], _Merged]:
    """A reader of one month of daily activity (optionally one model), whichever endpoint works."""
    aggregated = True

    def read(model: str | None) -> _Merged:
        nonlocal aggregated
        params = dict(base) if model is None else {**base, "model": model}
        if aggregated:
            try:
                return merge_daily_pages([get_json(client, SOURCE, DAILY_AGGREGATED, params)])
            except UpstreamStatusError as exc:
                if exc.status != 404:
                    raise
                aggregated = False  # before 1.108 only the row-paged endpoint exists
        paged = {**params, "page_size": str(cfg.daily_page_size)}
        return merge_daily_pages(list(_pages(client, DAILY, paged, top=False)))

    return read


def merge_daily_pages(pages: list[Any]) -> _Merged:
    """Merge daily-activity pages by date: date -> breakdown -> key -> (metrics, alias), summed.

    The paged endpoint cuts through raw rows, so one date can come back on two pages with part
    of its rows on each; overwriting would lose the first part.
    """
    merged: _Merged = {}
    for body in pages:
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise _shape(DAILY, "a list under 'results'", results)
        for day in results:
            if not isinstance(day, dict) or not isinstance(day.get("date"), str):
                raise _shape(DAILY, "a result with a string date", day)
            breakdown = day.get("breakdown", {})
            if not isinstance(breakdown, dict):
                raise _shape(DAILY, "an object under 'breakdown'", breakdown)
            into = merged.setdefault(day["date"], {})
            for kind in ("entities", "models"):
                _merge_breakdown(into.setdefault(kind, {}), breakdown.get(kind, {}))
    return merged


def _merge_breakdown(into: dict[str, tuple[UsageMetrics, str | None]], part: object) -> None:
    if not isinstance(part, dict):
        raise _shape(DAILY, "an object per breakdown", part)
    for key, entry in part.items():
        if not isinstance(entry, dict):
            raise _shape(DAILY, "an object per breakdown entry", entry)
        metrics = _metrics(entry.get("metrics"))
        metadata = entry.get("metadata")
        alias = metadata.get("team_alias") if isinstance(metadata, dict) else None
        before, known = into.get(key, (ZERO, None))
        into[key] = (before.plus(metrics), known or (alias if isinstance(alias, str) else None))


def _total_over_dates(merged: _Merged, kind: str) -> dict[str, tuple[UsageMetrics, str | None]]:
    totals: dict[str, tuple[UsageMetrics, str | None]] = {}
    for day in sorted(merged):
        for key, (metrics, alias) in merged[day].get(kind, {}).items():
            before, known = totals.get(key, (ZERO, None))
            totals[key] = (before.plus(metrics), known or alias)
    return totals


def _metrics(raw: object) -> UsageMetrics:
    if not isinstance(raw, dict):
        raise _shape(DAILY, "a 'metrics' object", raw)
    return UsageMetrics(
        spend=_number(raw, "spend", DAILY),
        prompt_tokens=_count(raw, "prompt_tokens"),
        completion_tokens=_count(raw, "completion_tokens"),
        requests=_count(raw, "api_requests"),
    )


# --- helpers ---------------------------------------------------------------------------------


def _pages(
    client: httpx.Client, path: str, params: Mapping[str, str], *, top: bool
) -> Iterator[dict[str, Any]]:
    """Yield pages until `page >= total_pages` (top level on the team list, in `metadata` else)."""
    page = 1
    while page <= _MAX_PAGES:
        body = get_json(client, SOURCE, path, {**params, "page": str(page)})
        if not isinstance(body, dict):
            raise _shape(path, "a JSON object", body)
        yield body
        paging = body if top else body.get("metadata")
        total = paging.get("total_pages") if isinstance(paging, dict) else None
        if not isinstance(total, int) or isinstance(total, bool):
            raise _shape(path, "an integer total_pages", total)
        if page >= total:
            return
        page += 1
    raise UpstreamPayloadError(f"{SOURCE}: {path} announced more than {_MAX_PAGES} pages")


def _number(item: Mapping[str, Any], key: str, path: str) -> float | None:
    value = item.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _shape(path, f"a number or null for {key!r}", value)
    return float(value)


def _count(item: Mapping[str, Any], key: str) -> int:
    value = item.get(key, 0)
    if value is None:
        return 0
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value != int(value)
        or value < 0
    ):
        raise _shape(DAILY, f"a non-negative whole number for {key!r}", value)
    return int(value)


def _shape(path: str, expected: str, got: object) -> UpstreamPayloadError:
    shown = repr(got)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return UpstreamPayloadError(f"{SOURCE}: {path}: expected {expected}, got {shown}")


def _explained(exc: UpstreamStatusError, client: httpx.Client) -> UpstreamStatusError:
    """Add the likely fix to auth failures, and make sure the key never rides along."""
    message = str(exc)
    key = client.headers.get("authorization", "").partition(" ")[2].strip()
    if key:
        message = message.replace(key, "<redacted>")
    if exc.status == 401:
        message += " — check the API key"
    elif exc.status == 403:
        message += " — the key needs a proxy_admin_viewer (read-only admin) role"
    return UpstreamStatusError(message, exc.status)


KIND = SourceKind(
    SOURCE, LiteLLMSnapshot, lambda config: config.sources.litellm, build_client, fetch
)

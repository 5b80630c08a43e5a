"""LiteLLM proxy: team budget state and month-to-date usage per team and model, as typed records.

Endpoints (all GET, `Authorization: Bearer <key>`; a proxy_admin_viewer key is enough):

- `/v2/team/list?page=N&page_size<=100`, paged until `page >= total_pages`: budget state. The
  pages are offset pages, so a team created or deleted while we read shifts them: a team seen
  twice unchanged counts once, and a read that does not add up to `total` (or whose `total`
  moved) fails the refresh rather than publish a doubled or missing budget.
- `/team/daily/activity/aggregated?start_date&end_date[&model]` (1.108+, unpaged), or on 404
  `/team/daily/activity?...&page=N&page_size=M`, whose pages cut through raw DB rows so one date
  can sit on two pages: pages are merged by date, summing, never overwriting. Usage is read
  per provider model (`model`) and named by its public `model_group` (litellm_daily.by_group).

A team or breakdown row with a bad number (NaN, negative, beyond the bounds in checks) is
dropped and counted; paging (litellm_wire.read_pages) stops at the announced page count plus
one, and never passes 2000 pages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import httpx

from exporter.config import Config, LiteLLMConfig
from exporter.credentials import read_secret
from exporter.errors import UpstreamIncomplete, UpstreamPayloadError, UpstreamStatusError
from exporter.sources.checks import (
    MISSING_FIELD,
    WRONG_TYPE,
    BadRecord,
    Tally,
    dedupe,
)
from exporter.sources.http import get_json, make_client
from exporter.sources.kind import SourceKind, section
from exporter.sources.litellm_daily import (
    DAILY,
    UNASSIGNED,
    Merged,
    UsageMetrics,
    by_group,
    merge_daily_pages,
    total_over_dates,
)
from exporter.sources.litellm_wire import money, parse_timestamp, read_pages, shape

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
TEAM_LIST = "/v2/team/list"
DAILY_AGGREGATED = "/team/daily/activity/aggregated"


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
class ModelUsage:
    """Month-to-date use of one model by one LiteLLM team (`team_id` None: no team).

    `model` is the public name teams call (LiteLLM's `model_group`, the `model_name` of its
    config); `deployment` is the provider model behind it (LiteLLM's `model`), "" when unknown.
    A proxy that reports no model group gives the provider model as the public name too.
    """

    team_id: str | None
    alias: str | None
    model: str
    spend: float | None  # None: unknown (older proxy), not zero
    prompt_tokens: int
    completion_tokens: int
    requests: int
    deployment: str = ""


@dataclass(frozen=True)
class LiteLLMSnapshot:
    """Everything one refresh read from LiteLLM: team budgets, and this month's usage."""

    teams: tuple[TeamBudget, ...]
    usage: tuple[ModelUsage, ...]
    dropped: Mapping[str, int] = field(default_factory=dict)

    def check_after(self, previous: object | None) -> None:
        """The team list is checked against its own `total`; nothing else to compare."""
        del previous


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
    tally = Tally()
    try:
        teams = _team_list(client, cfg.page_size, tally)
        usage = tuple(_usage(client, cfg, start, today, teams, tally))
    except UpstreamStatusError as exc:
        raise _explained(exc, client) from None
    return LiteLLMSnapshot(teams, usage, tally.frozen())


# --- team list -------------------------------------------------------------------------------


def _team_list(client: httpx.Client, page_size: int, tally: Tally) -> tuple[TeamBudget, ...]:
    """Every team, once; fails when the pages do not add up to the `total` they announce."""
    read, bad, totals = [], Tally(), set()
    for body in read_pages(client, TEAM_LIST, {"page_size": str(min(page_size, 100))}, top=True):
        teams = body.get("teams")
        if not isinstance(teams, list):
            raise shape(TEAM_LIST, "a list under 'teams'", teams)
        total = body.get("total")
        if total is not None:
            if isinstance(total, bool) or not isinstance(total, int):
                raise shape(TEAM_LIST, "an integer total", total)
            totals.add(total)
        for item in teams:
            try:
                read.append(_team(item))
            except BadRecord as exc:
                bad.drop(exc)
    unique = dedupe(SOURCE, read, lambda t: t.team_id, bad)
    if len(totals) > 1:
        raise UpstreamIncomplete(
            f"{SOURCE}: {TEAM_LIST}: total changed while paging ({sorted(totals)}): "
            "teams were created or deleted during the read"
        )
    if totals and len(unique) + bad.bad() != next(iter(totals)):
        raise UpstreamIncomplete(
            f"{SOURCE}: {TEAM_LIST}: read {len(unique)} teams (+{bad.bad()} dropped), "
            f"but total is {next(iter(totals))}"
        )
    tally.update(bad)
    return tuple(unique)


def _team(item: object) -> TeamBudget:
    if not isinstance(item, dict):
        raise BadRecord(WRONG_TYPE, "a team is not an object")
    team_id = item.get("team_id")
    if not isinstance(team_id, str) or not team_id:
        raise BadRecord(MISSING_FIELD if team_id is None else WRONG_TYPE, "team_id")
    alias = item.get("team_alias")
    try:
        reset_at = parse_timestamp(item.get("budget_reset_at"))
    except UpstreamPayloadError as exc:
        raise BadRecord(WRONG_TYPE, str(exc)) from None
    return TeamBudget(
        team_id=team_id,
        alias=alias if isinstance(alias, str) else None,
        spend=money(item, "spend"),
        max_budget=money(item, "max_budget"),
        soft_budget=money(item, "soft_budget"),
        budget_reset_at=reset_at,
    )


# --- daily activity ---------------------------------------------------------------------------

# Per (team, model) figures: the daily breakdowns are one-dimensional. `entities` is per team and
# `models` per model; the `api_key_breakdown` under each could be crossed through the key, but a
# key's team is read from the key table *now*, not from the row, so a key that changed team (or
# was deleted) would put tokens on the wrong team. Filtering by `team_ids` would be exact for
# named teams but cannot select the NULL-team rows LiteLLM shows as "Unassigned". Filtering by
# `model` can: the same row-level query, restricted to one model, whose `entities` breakdown is
# then exactly team x model, Unassigned included. So we ask once unfiltered to learn which models
# were used this month, then once per model (still paged on older proxies).
#
# The `model` filter and the `models` breakdown are the provider model (the DB column `model`);
# teams and operators know the public name, the `model_group`. A provider model's filtered read
# names its groups in `model_groups`: with one group (the usual case) every team's use of the
# provider model is that group's. A provider model behind several groups is split per named
# team by one more read filtered on that team too; Unassigned takes what the groups have left.


def _usage(
    client: httpx.Client,
    cfg: LiteLLMConfig,
    start: date,
    end: date,
    teams: tuple[TeamBudget, ...],
    tally: Tally,
) -> Iterator[ModelUsage]:
    aliases = {t.team_id: t.alias for t in teams}
    base = {"start_date": start.isoformat(), "end_date": end.isoformat()}
    reader = _reader(client, cfg, base, tally)
    models = sorted({m for day in reader(None, None).values() for m in day.get("models", {})})
    for model in models:
        merged = reader(model, None)
        entities = total_over_dates(merged, "entities")
        groups = total_over_dates(merged, "model_groups")
        for entity, group, metrics in by_group(reader, model, entities, groups):
            alias = entities[entity][1]
            team_id = None if entity == UNASSIGNED else entity
            if alias is None and team_id is not None:
                alias = aliases.get(team_id)
            yield ModelUsage(
                team_id,
                alias,
                group,
                metrics.spend,
                metrics.prompt_tokens,
                metrics.completion_tokens,
                metrics.requests,
                deployment=model,
            )


def _reader(
    client: httpx.Client, cfg: LiteLLMConfig, base: Mapping[str, str], tally: Tally
) -> Callable[[str | None, str | None], Merged]:
    """A reader of one month of daily activity (optionally of one model, one team), whichever
    endpoint works."""
    aggregated = True

    def read(model: str | None, team_id: str | None) -> Merged:
        nonlocal aggregated
        params = dict(base) if model is None else {**base, "model": model}
        if team_id is not None:
            params["team_ids"] = team_id
        if aggregated:
            try:
                body = get_json(client, SOURCE, DAILY_AGGREGATED, params)
                return merge_daily_pages([body], tally)
            except UpstreamStatusError as exc:
                if exc.status != 404:
                    raise
                aggregated = False  # before 1.108 only the row-paged endpoint exists
        paged = {**params, "page_size": str(cfg.daily_page_size)}
        return merge_daily_pages(list(read_pages(client, DAILY, paged, top=False)), tally)

    return read


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

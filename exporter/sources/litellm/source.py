"""LiteLLM proxy: team budget state and month-to-date usage per team and model, as typed records.

Endpoints (all GET, `Authorization: Bearer <key>`; a proxy_admin_viewer key is enough):

- `/v2/team/list?page=N&page_size<=100`, paged until `page >= total_pages`: budget state
  (teams). The pages are offset pages, so a team created or deleted while we read shifts them:
  a team seen twice unchanged counts once, and a read that does not add up to `total` (or whose
  `total` moved) fails the refresh rather than publish a doubled or missing budget.
- `/team/daily/activity/aggregated?start_date&end_date&timezone&include_current_utc_day` (1.108+,
  unpaged), or on 404 `/team/daily/activity?...&page=N&page_size=M`, whose pages cut through
  raw DB rows so one date can sit on two pages: pages are merged by date, summing, never
  overwriting. Team x model comes from one unfiltered read of each UTC date (dates),
  joined through the API-key sub-breakdowns (key_breakdown); closed dates are kept between
  refreshes (cache), or kept date by date for the FOCUS export (by_day).
  A proxy whose breakdowns name no keys is read per model (per_model).

Bodies are decoded with msgspec into typed structs (decode); what a refresh returns is typed in
snapshot. Money is in `sources.litellm.currency`; the snapshot carries the exchange rate to the
exporter's currency, applied where LiteLLM's figures enter the join (`LiteLLMSnapshot.converted`).

A team, breakdown or tag row with a bad number (NaN, negative, a string, beyond the bounds in
checks) or a `null` spend is dropped and counted, and fails the refresh: its spend and tokens
would be missing from every total (checks.refuse_dropped). A team list, a date's activity or
the tag activity (empty, or the endpoint gone: 404) that comes back empty after holding data
fails too, until a later read says the same (checks.Emptiness). Paging
(wire.read_pages) stops at the announced page count plus one, and never passes 2000 pages.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

import httpx

from exporter.config.schema import Config, LiteLLMConfig
from exporter.credentials import read_secret
from exporter.errors import (
    ExchangeRateError,
    UpstreamStatusError,
)
from exporter.files import read_regular_file
from exporter.sources.checks import (
    Emptiness,
    Tally,
    emptiness_of,
    refuse_dropped,
)
from exporter.sources.clients import make_client
from exporter.sources.kind import SourceKind
from exporter.sources.litellm.by_day import Dated, read_dated
from exporter.sources.litellm.cache import DAY, DailyCache, MonthDates, month_dates
from exporter.sources.litellm.daily import (
    UNASSIGNED,
    UsageMetrics,
    merge_daily_pages,
)
from exporter.sources.litellm.dates import DatesRead, read_date
from exporter.sources.litellm.day_spend import DaySpend
from exporter.sources.litellm.packed import PackedDates
from exporter.sources.litellm.per_model import Usage, per_model_usage
from exporter.sources.litellm.snapshot import LiteLLMSnapshot, usage_records
from exporter.sources.litellm.tags import read_tag_spend
from exporter.sources.litellm.teams import read_team_list
from exporter.sources.litellm.wire import (
    parse_timestamp,
)
from exporter.sources.reading import Reading

__all__ = [
    "KIND",
    "UNASSIGNED",
    "LiteLLMShared",
    "UsageMetrics",
    "build_client",
    "fetch",
    "merge_daily_pages",
    "parse_timestamp",
    "shared_settings",
]

SOURCE = "litellm"
_MAX_RATE_FILE = 256  # one number and some whitespace; more is not a rate file


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


# Closed days per client: the refresher keeps one client per source for the process's life, so a
# restart (a new client) reads the month again.
_CACHES: weakref.WeakKeyDictionary[httpx.Client, DailyCache] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class LiteLLMShared:
    """What the LiteLLM source reads from outside `sources.litellm`."""

    reads_tags: bool  # a dimension splits by request tag: spend per tag is read too


def shared_settings(config: Config) -> LiteLLMShared:
    """The LiteLLM source's shared settings, built once by the wiring."""
    return LiteLLMShared(reads_tags=any(d.litellm_tag_prefix for d in config.dimensions))


def fetch(
    client: httpx.Client, cfg: LiteLLMConfig, shared: LiteLLMShared, reading: Reading
) -> LiteLLMSnapshot:
    """Read team budgets and the reading's month of usage per team and model.

    The month is the configured zone's; LiteLLM's dates are UTC dates (cache). A reading by
    day keeps each date apart and reads them all, whatever the refreshes have kept.
    """
    to_ours, now = exchange_rate(cfg), reading.at
    dates = month_dates(now, reading.month.zone)
    cache = _CACHES.setdefault(client, DailyCache())
    seen = emptiness_of(client)
    tally, repaired_before = Tally(), cache.repairs
    try:
        teams = read_team_list(client, cfg.page_size, tally)
        refuse_dropped(SOURCE, tally, "teams")
        tags, team_tags, tagged = _tags(client, shared, cfg, dates, tally)
        # A tag record dropped would move spend between a dimension's values.
        refuse_dropped(SOURCE, tally, "tag rows")
        parts = {"the team list": bool(teams), **tagged}
        if reading.by_day:
            dated = read_dated(client, cfg, dates, tally)
            refuse_dropped(SOURCE, tally, "daily rows")
            seen.check(SOURCE, {**parts, **_held(dates, dated)})
            whole = LiteLLMSnapshot(
                teams, (), tally.frozen(), to_ours, dated=dated, tags=tags, team_tags=team_tags
            )
            return whole.as_of(reading)
        usage, spent = _month_usage(client, cfg, dates, now, cache, tally, (seen, parts))
        refuse_dropped(SOURCE, tally, "daily rows")
    except UpstreamStatusError as exc:
        raise _explained(exc, client) from None
    records = tuple(usage_records(usage, {t.team_id: t.alias for t in teams}))
    # The refresher adds each refresh's repairs up, as it does drops.
    repairs = cache.repairs - repaired_before
    return LiteLLMSnapshot(
        teams,
        records,
        tally.frozen(),
        to_ours,
        repairs,
        tags=tags,
        team_tags=team_tags,
        daily_spend=spent,
    )


_TAG_ACTIVITY = "the tag activity"


def _held(dates: MonthDates, dated: Dated) -> dict[str, bool]:
    """Whether each date of the month held any use (a date a keyed read found none on is not
    in `dated` at all)."""
    held = {day for day, usage in dated if usage}
    days = (dates.start + DAY * n for n in range((dates.end - dates.start).days + 1))
    return {f"the daily activity of {day}": day in held for day in days}


def _tags(
    client: httpx.Client,
    shared: LiteLLMShared,
    cfg: LiteLLMConfig,
    dates: MonthDates,
    tally: Tally,
) -> tuple[dict[str, float], dict[tuple[str, str], float], dict[str, bool]]:
    """Spend per request tag (and per team and tag), when a dimension reads tags, and whether
    the tag activity held any (for the emptiness check).

    A proxy without the endpoint (404) has no tags; one whose endpoint answered with data
    before is judged as an empty read after data: it waits for a second read to say the same.
    """
    if not shared.reads_tags:
        return {}, {}, {}
    try:
        tags, team_tags = read_tag_spend(client, cfg, dates, tally)
    except UpstreamStatusError as exc:
        if exc.status == 404:
            return {}, {}, {_TAG_ACTIVITY: False}
        raise
    return tags, team_tags, {_TAG_ACTIVITY: bool(tags)}


def exchange_rate(cfg: LiteLLMConfig) -> float:
    """The configured rate, or the rate file's one number, read now (a finance job updates it)."""
    if cfg.rate_file is None:
        return 1.0 if cfg.rate is None else cfg.rate
    where = f"{SOURCE}: rate file {cfg.rate_file}"
    try:
        raw = read_regular_file(cfg.rate_file, _MAX_RATE_FILE + 1)
    except OSError as exc:
        raise ExchangeRateError(f"{where}: {exc.strerror or exc}") from None
    try:
        if len(raw) > _MAX_RATE_FILE:
            raise ValueError
        value = float(raw.decode("ascii").strip())
    except (ValueError, UnicodeDecodeError):
        raise ExchangeRateError(f"{where}: expected one number, like 0.92") from None
    if not (math.isfinite(value) and 0.0 < value < 1e6):
        raise ExchangeRateError(f"{where}: {value:g} is not a usable rate (0 < rate < 1e6)")
    return value


# --- daily activity ---------------------------------------------------------------------------


def _month_usage(
    client: httpx.Client,
    cfg: LiteLLMConfig,
    dates: MonthDates,
    now: datetime,
    cache: DailyCache,
    tally: Tally,
    seen: tuple[Emptiness, Mapping[str, bool]],
) -> tuple[Iterable[Usage], DaySpend]:
    """The month's use, from the dates that can still change, read one by one, plus the kept;
    and its spend per date and model (none from a proxy whose breakdowns name no keys).

    A date read again that had use and now has none, or the team list or tag activity
    (`seen[1]`, what they held), waits for a second read before anything keeps it: all are
    judged at once, so one later read confirms them all.
    """
    emptiness, parts = seen
    start = cache.read_from(dates, now, cfg.reconcile_interval)
    zone = {"timezone": str(dates.offset_minutes), "include_current_utc_day": "true"}
    read = DatesRead(usage=PackedDates(cache.uses_for(dates)))
    day = start
    while day <= dates.end:
        read_date(client, cfg, day, zone, tally, read)
        day += DAY
    # Before the cache keeps any date: a closed date kept short would stay short.
    refuse_dropped(SOURCE, tally, "daily rows")
    if not read.keyed:
        if start != dates.start:  # the models of the whole month are needed
            return _month_usage(client, cfg, dates, now, DailyCache(), tally, seen)
        params = {"start_date": start.isoformat(), "end_date": dates.end.isoformat()}
        usage = list(
            per_model_usage(
                client,
                {**params, **zone},
                cfg.daily_page_size,
                tally,
                models=read.models,
                aggregated=read.aggregated,
            )
        )
        emptiness.check(SOURCE, {**parts, "the month's daily activity": bool(usage)})
        return usage, {}
    read_days = (start + DAY * n for n in range((dates.end - start).days + 1))
    days = {f"the daily activity of {d}": bool(read.usage.get(d.isoformat())) for d in read_days}
    emptiness.check(SOURCE, {**parts, **days})

    totals = cache.update(dates, start, read.usage, read.aliases, now)
    usage = [(e, cache.aliases.get(e), g, m, totals[(e, g, m)]) for e, g, m in sorted(totals)]
    return usage, cache.day_spend(read.usage)


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
    SOURCE,
    LiteLLMSnapshot,
    lambda config: config.sources.litellm,
    shared_settings,
    build_client,
    fetch,
)

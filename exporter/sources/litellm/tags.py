"""LiteLLM spend per request tag over the month: `/tag/daily/activity` (docs/sources/litellm.md).

The endpoint has the shape of `/team/daily/activity` with the tag as the entity: pages of
`results`, each a date with `breakdown.entities[<tag>].metrics.spend`. Pages cut through raw
rows, so one date may sit on two pages; spend is only ever summed, so that does no harm. A
request with several tags counts under each one, which the ledger allows for (a dimension's
tagged share of LLM spend is capped at the whole). Read only when a dimension names a
`litellm_tag_prefix`. A tag whose spend is missing, `null` or bad, and an API-key breakdown
entry that does not parse (its team or its spend), are dropped and counted; the source then
refuses the read (checks.refuse_dropped), so the dimension split stays at its last complete
figures rather than being recomputed without them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import httpx

from exporter.config.sources import LiteLLMConfig
from exporter.sources.checks import MISSING_FIELD, WRONG_TYPE, BadRecord, Tally, label
from exporter.sources.litellm.cache import MonthDates
from exporter.sources.litellm.wire import read_pages, shape, spend

__all__ = ["TAG_DAILY", "read_tag_spend", "tag_spend"]

TAG_DAILY = "/tag/daily/activity"


def read_tag_spend(
    client: httpx.Client, cfg: LiteLLMConfig, dates: MonthDates, tally: Tally
) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """Spend per tag from the month's first date to its last, in LiteLLM's currency; and per
    (team id, tag) from the tags' API-key breakdowns ("" for a key with no team)."""
    params = {
        "start_date": dates.start.isoformat(),
        "end_date": dates.end.isoformat(),
        "page_size": str(cfg.daily_page_size),
    }
    totals: dict[str, float] = defaultdict(float)
    by_team: dict[tuple[str, str], float] = defaultdict(float)
    for body in read_pages(client, TAG_DAILY, params, top=False):
        page, teams = tag_spend(body, tally)
        for tag, amount in page.items():
            totals[tag] += amount
        for key, amount in teams.items():
            by_team[key] += amount
    return dict(totals), dict(by_team)


def tag_spend(
    body: dict[str, Any], tally: Tally
) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """One page's spend per tag, and per (team id, tag), every date summed."""
    results = body.get("results")
    if not isinstance(results, list):
        raise shape(TAG_DAILY, "a list under 'results'", results)
    out: dict[str, float] = defaultdict(float)
    by_team: dict[tuple[str, str], float] = defaultdict(float)
    for day in results:
        breakdown = day.get("breakdown") if isinstance(day, dict) else None
        entities = breakdown.get("entities") if isinstance(breakdown, dict) else None
        if not isinstance(entities, dict):
            tally.drop(BadRecord(WRONG_TYPE, f"{TAG_DAILY}: a date without breakdown.entities"))
            continue
        for tag, entity in entities.items():
            try:
                tag_total = _spend(tag, entity)
            except BadRecord as exc:
                tally.drop(exc)
                continue
            out[tag] += tag_total
            for team, part in _by_team(tag, entity, tally).items():
                by_team[(team, tag)] += part
    return dict(out), dict(by_team)


def _spend(tag: object, entity: object) -> float:
    if not isinstance(tag, str):
        raise BadRecord(WRONG_TYPE, "a tag that is not a string")
    label(tag, "a tag")
    metrics = entity.get("metrics") if isinstance(entity, dict) else None
    if not isinstance(metrics, dict):
        raise BadRecord(WRONG_TYPE, f"tag {tag[:60]!r}: metrics is not an object")
    value = spend(metrics)
    if value is None:  # the endpoint is newer than spend: a tag without one is a broken row
        raise BadRecord(MISSING_FIELD, f"tag {tag[:60]!r}: no spend")
    return value


def _by_team(tag: str, entity: Any, tally: Tally) -> dict[str, float]:
    """A tag's spend per team id, from its API-key breakdown; an entry whose team or spend
    does not parse is dropped and counted (the split by team would be short without it)."""
    keys = entity.get("api_key_breakdown")
    if keys is not None and not isinstance(keys, dict):
        tally.drop(BadRecord(WRONG_TYPE, f"tag {tag[:60]!r}: api_key_breakdown is not an object"))
        return {}
    out: dict[str, float] = defaultdict(float)
    for part in (keys or {}).values():
        try:
            team, value = _key_part(tag, part)
        except BadRecord as exc:
            tally.drop(exc)
            continue
        if value:
            out[team] += value
    return dict(out)


def _key_part(tag: str, part: object) -> tuple[str, float | None]:
    """One API key's (team id, spend) under a tag ("" for a key with no team)."""
    where = f"tag {tag[:60]!r}: an API key"
    if not isinstance(part, dict):
        raise BadRecord(WRONG_TYPE, f"{where} is not an object")
    metadata = part.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise BadRecord(WRONG_TYPE, f"{where}: metadata is not an object")
    team = (metadata or {}).get("team_id")
    if team is not None and not isinstance(team, str):
        raise BadRecord(WRONG_TYPE, f"{where}: team_id is not a string")
    if team:
        label(team, f"{where}: team_id")
    metrics = part.get("metrics")
    if metrics is not None and not isinstance(metrics, dict):
        raise BadRecord(WRONG_TYPE, f"{where}: metrics is not an object")
    return team or "", spend(metrics or {})

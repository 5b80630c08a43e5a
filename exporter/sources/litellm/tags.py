"""LiteLLM spend per request tag over the month: `/tag/daily/activity` (docs/sources/litellm.md).

The endpoint has the shape of `/team/daily/activity` with the tag as the entity: pages of
`results`, each a date with `breakdown.entities[<tag>].metrics.spend`. Pages cut through raw
rows, so one date may sit on two pages; spend is only ever summed, so that does no harm. A
request with several tags counts under each one, which the ledger allows for (a dimension's
tagged share of LLM spend is capped at the whole). Read only when a dimension names a
`litellm_tag_prefix`; a tag with a bad spend is dropped and counted.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import httpx

from exporter.config.sources import LiteLLMConfig
from exporter.sources.checks import WRONG_TYPE, BadRecord, Tally, label
from exporter.sources.litellm.cache import MonthDates
from exporter.sources.litellm.wire import money, read_pages, shape

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
        for tag, spend in page.items():
            totals[tag] += spend
        for key, spend in teams.items():
            by_team[key] += spend
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
                spend = _spend(tag, entity)
            except BadRecord as exc:
                tally.drop(exc)
                continue
            out[tag] += spend
            for team, part in _by_team(tag, entity).items():
                by_team[(team, tag)] += part
    return dict(out), dict(by_team)


def _spend(tag: object, entity: object) -> float:
    if not isinstance(tag, str):
        raise BadRecord(WRONG_TYPE, "a tag that is not a string")
    label(tag, "a tag")
    metrics = entity.get("metrics") if isinstance(entity, dict) else None
    if not isinstance(metrics, dict):
        raise BadRecord(WRONG_TYPE, f"tag {tag[:60]!r}: metrics is not an object")
    return money(metrics, "spend") or 0.0


def _by_team(tag: str, entity: Any) -> dict[str, float]:
    """A tag's spend per team id, from its API-key breakdown; metadata, so a key whose team or
    spend does not parse is left out (the tag's own total above stays whole)."""
    keys = entity.get("api_key_breakdown")
    out: dict[str, float] = defaultdict(float)
    for part in keys.values() if isinstance(keys, dict) else ():
        metadata = part.get("metadata") if isinstance(part, dict) else None
        team = metadata.get("team_id") if isinstance(metadata, dict) else None
        metrics = part.get("metrics") if isinstance(part, dict) else None
        if team is not None and (not isinstance(team, str) or len(team) > 1000):
            continue
        try:
            spend = money(metrics, "spend") if isinstance(metrics, dict) else None
        except BadRecord:
            continue
        if spend:
            out[team or ""] += spend
    return dict(out)

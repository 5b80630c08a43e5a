"""LiteLLM's team list (`/v2/team/list`), paged and checked against its total, as team budgets."""

from __future__ import annotations

import httpx

from exporter.errors import UpstreamIncomplete, UpstreamPayloadError
from exporter.sources.checks import MISSING_FIELD, WRONG_TYPE, BadRecord, Tally, dedupe, label
from exporter.sources.litellm.snapshot import TeamBudget
from exporter.sources.litellm.wire import (
    SOURCE,
    money,
    parse_timestamp,
    read_pages,
    shape,
    spend,
)

__all__ = ["TEAM_LIST", "read_team_list"]

TEAM_LIST = "/v2/team/list"


def read_team_list(client: httpx.Client, page_size: int, tally: Tally) -> tuple[TeamBudget, ...]:
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
    tally.add(bad)
    return tuple(unique)


def _team(item: object) -> TeamBudget:
    if not isinstance(item, dict):
        raise BadRecord(WRONG_TYPE, "a team is not an object")
    team_id = item.get("team_id")
    if not isinstance(team_id, str) or not team_id:
        raise BadRecord(MISSING_FIELD if team_id is None else WRONG_TYPE, "team_id")
    label(team_id, "a team_id")  # it names a team when no alias does
    alias = item.get("team_alias")
    if isinstance(alias, str):
        label(alias, f"team {team_id!r}: team_alias")
    try:
        reset_at = parse_timestamp(item.get("budget_reset_at"))
    except UpstreamPayloadError as exc:
        raise BadRecord(WRONG_TYPE, str(exc)) from None
    return TeamBudget(
        team_id=team_id,
        alias=alias if isinstance(alias, str) else None,
        spend=spend(item),  # null: a bad record, never a budget series gone
        max_budget=money(item, "max_budget"),
        soft_budget=money(item, "soft_budget"),
        budget_reset_at=reset_at,
    )

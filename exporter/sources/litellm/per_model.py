"""The per-model read of LiteLLM's daily activity: one filtered read per provider model.

The one-read join (litellm_join) needs the `api_key_breakdown` under each team entry; a proxy
whose breakdowns carry none is read this way instead, as before: once unfiltered to learn which
models were used, then once per model (still paged on older proxies).

The `model` filter is the same row-level query restricted to one provider model, so its
`entities` breakdown is exactly team x model, Unassigned included. Filtering by `team_ids`
would be exact for named teams but cannot select the NULL-team rows LiteLLM shows as
"Unassigned". A provider model's filtered read names its groups in `model_groups`: with one
group every team's use of the model is that group's; a model behind several groups is split
per named team by one more read filtered on that team too (litellm_daily.by_group).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

import httpx

from exporter.errors import UpstreamStatusError
from exporter.sources.checks import Tally
from exporter.sources.http import get_json
from exporter.sources.litellm.daily import (
    DAILY,
    Merged,
    UsageMetrics,
    by_group,
    merge_daily_pages,
    total_over_dates,
)
from exporter.sources.litellm.wire import SOURCE, read_pages

__all__ = ["DAILY_AGGREGATED", "Usage", "per_model_usage"]

DAILY_AGGREGATED = "/team/daily/activity/aggregated"

# (entity, its alias if the breakdown names one, public name, provider model, metrics)
Usage = tuple[str, str | None, str, str, UsageMetrics]


def per_model_usage(
    client: httpx.Client,
    params: Mapping[str, str],
    page_size: int,
    tally: Tally,
    *,
    models: Iterable[str],
    aggregated: bool,
) -> Iterator[Usage]:
    """The month's use per entity, public name and provider model, read model by model.

    `models` are those the unfiltered read of the same month found; `aggregated` says whether
    that read found the aggregated endpoint.
    """
    reader = _reader(client, params, page_size, tally, aggregated)
    for model in sorted(models):
        merged = reader(model, None)
        entities = total_over_dates(merged, "entities")
        groups = total_over_dates(merged, "model_groups")
        for entity, group, metrics in by_group(reader, model, entities, groups):
            yield entity, entities[entity][1], group, model, metrics


def _reader(
    client: httpx.Client, base: Mapping[str, str], page_size: int, tally: Tally, aggregated: bool
) -> Callable[[str | None, str | None], Merged]:
    """A reader of one month of daily activity (optionally of one model, one team), whichever
    endpoint works."""

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
        paged = {**_no_zone(params), "page_size": str(page_size)}
        return merge_daily_pages(list(read_pages(client, DAILY, paged, top=False)), tally)

    return read


def _no_zone(params: Mapping[str, str]) -> dict[str, str]:
    # The row-paged endpoint has no time zone: the range already ends on the right UTC date.
    return {k: v for k, v in params.items() if k not in ("timezone", "include_current_utc_day")}

"""A closed month from LiteLLM kept date by date, for the month to date at any day's end.

The FOCUS export needs each local day's month to date. LiteLLM keys its rows by UTC date, so
the month to date at an instant is the sum of its dates up to that instant's (`month_dates`);
reading the month's dates once and summing a prefix gives every day without reading again.
Sums run in date order, as the refresh's cache adds its dates, so the figures are the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

import httpx

from exporter.config.schema import LiteLLMConfig
from exporter.sources.checks import Tally
from exporter.sources.litellm.cache import DAY, MonthDates
from exporter.sources.litellm.daily import UsageMetrics
from exporter.sources.litellm.dates import DatesRead, read_date
from exporter.sources.litellm.per_model import Usage, per_model_usage

__all__ = ["Dated", "read_dated", "summed_to"]

# Each UTC date of the month and its use (entity, alias, public name, provider model, metrics).
Dated = tuple[tuple[date, tuple[Usage, ...]], ...]


def read_dated(client: httpx.Client, cfg: LiteLLMConfig, month: MonthDates, tally: Tally) -> Dated:
    """Every date of the month, read once; model by model and date by date on a proxy whose
    breakdowns name no keys."""
    zone = {"timezone": str(month.offset_minutes), "include_current_utc_day": "true"}
    read = DatesRead()
    dates = []
    day = month.start
    while day <= month.end:
        read_date(client, cfg, day, zone, tally, read)
        dates.append(day)
        day += DAY
    if read.keyed:
        return tuple(
            (date.fromisoformat(d), tuple(_keyed(usage.items(), read.aliases)))
            for d, usage in sorted(read.usage.items())
        )
    return tuple((d, tuple(_per_model(client, cfg, d, zone, read, tally))) for d in dates)


def _keyed(
    usage: Iterable[tuple[tuple[str, str, str], UsageMetrics]], aliases: dict[str, str]
) -> Iterable[Usage]:
    for (entity, group, model), metrics in sorted(usage):
        yield entity, aliases.get(entity), group, model, metrics


def _per_model(
    client: httpx.Client,
    cfg: LiteLLMConfig,
    day: date,
    zone: dict[str, str],
    read: DatesRead,
    tally: Tally,
) -> Iterable[Usage]:
    params = {"start_date": day.isoformat(), "end_date": day.isoformat(), **zone}
    return per_model_usage(
        client,
        params,
        cfg.daily_page_size,
        tally,
        models=read.models,
        aggregated=read.aggregated,
    )


def summed_to(dated: Dated, last: date) -> list[Usage]:
    """The use of every date up to `last`, summed per entity, public name and provider model."""
    sums: dict[tuple[str, str, str], tuple[str | None, UsageMetrics]] = {}
    for day, usage in dated:
        if day > last:
            break
        for entity, alias, group, model, metrics in usage:
            key = (entity, group, model)
            before = sums.get(key)
            if before is None:
                sums[key] = (alias, metrics)
            else:
                sums[key] = (before[0] or alias, before[1].plus(metrics))
    return [(e, alias, g, m, metrics) for (e, g, m), (alias, metrics) in sorted(sums.items())]

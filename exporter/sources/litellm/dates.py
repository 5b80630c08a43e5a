"""LiteLLM daily activity read one UTC date at a time, whichever daily endpoint the proxy has."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date

import httpx

from exporter.config.schema import LiteLLMConfig
from exporter.errors import UpstreamStatusError
from exporter.sources.checks import Tally
from exporter.sources.http import get_bytes
from exporter.sources.litellm.daily import DAILY
from exporter.sources.litellm.decode import Days, decode_body
from exporter.sources.litellm.key_breakdown import day_usage, has_key_breakdowns
from exporter.sources.litellm.packed import PackedDates
from exporter.sources.litellm.per_model import DAILY_AGGREGATED
from exporter.sources.litellm.wire import SOURCE, read_text_pages

__all__ = ["DatesRead", "read_date"]


@dataclass
class DatesRead:
    """What the reads of single dates found, date by date."""

    usage: PackedDates = field(default_factory=PackedDates)
    aliases: dict[str, str] = field(default_factory=dict)
    models: set[str] = field(default_factory=set)
    keyed: bool = True  # every date's breakdowns named their keys
    aggregated: bool = True  # the aggregated endpoint answers


def read_date(
    client: httpx.Client,
    cfg: LiteLLMConfig,
    day: date,
    zone: Mapping[str, str],
    tally: Tally,
    read: DatesRead,
) -> None:
    """Read one UTC date and keep only its use: one day's body is held at a time, not a month's.

    A month of a thousand teams and fifty models is about a gigabyte of JSON in one body.
    """
    params = {"start_date": day.isoformat(), "end_date": day.isoformat()}
    days, read.aggregated = _read_days(client, cfg, params, zone, tally, read.aggregated)
    table = days.get(day.isoformat())
    if table is None:
        return  # no rows that date
    read.models.update(table["models"])
    read.aliases.update({name: c.alias for name, c in table["entities"].items() if c.alias})
    if read.keyed and has_key_breakdowns(table):
        read.usage[day.isoformat()] = day_usage(table)
    else:
        read.keyed = False


def _read_days(
    client: httpx.Client,
    cfg: LiteLLMConfig,
    params: Mapping[str, str],
    zone: Mapping[str, str],
    tally: Tally,
    aggregated: bool,
) -> tuple[Days, bool]:
    """One unfiltered read of daily activity, and whether the aggregated endpoint answered."""
    days: Days = {}
    if aggregated:
        try:
            # No name holds the body: decode_body lets it go once decoded.
            query = {**params, **zone}
            decode_body(get_bytes(client, SOURCE, DAILY_AGGREGATED, query), days, tally)
            return days, True
        except UpstreamStatusError as exc:
            if exc.status != 404:
                raise
    # Before 1.108 only the row-paged endpoint exists; it takes no time zone.
    paged = {**params, "page_size": str(cfg.daily_page_size)}
    read_text_pages(client, DAILY, paged, lambda text: decode_body(text, days, tally))
    return days, False

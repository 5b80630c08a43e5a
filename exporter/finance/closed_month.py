"""A closed past month for the report: which instant to read the sources at, and OpenCost's window.

Every source's `fetch(client, config, now)` reads "the month of `now`", up to `now`. For a
closed month the report reads at an instant on the month's last day both in the configured
zone and in UTC (LiteLLM keys its daily rows by UTC date, so its month is then the 1st to the
last day), and replaces OpenCost's fetch so its month window is exactly [the month's start,
the next month's start) in the configured zone, and its rate window (the GPU-hour price) the
last `rate_window` of the month. Kueue and DCGM answer with their state now: they keep no
history, so a closed month's quota figures rest on today's quotas, unless `report.prometheus`
names where the exporter's own quota series are kept (exporter.finance.quota_history).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from exporter.calendar import next_month_start
from exporter.config.schema import Config
from exporter.serve.refresher import Source
from exporter.sources.checks import Tally
from exporter.sources.deadline import RetryPolicy, refresh_budget
from exporter.sources.kind import section
from exporter.sources.opencost import source as opencost

__all__ = ["ClosedMonth", "closed_month", "closed_month_sources"]

_MONTH = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")


@dataclass(frozen=True)
class ClosedMonth:
    """A calendar month in the configured zone, and the instant the sources are read at."""

    start: datetime
    end: datetime  # the next month's start: the window is [start, end)
    read_at: datetime


def closed_month(value: str, config: Config, now: datetime) -> ClosedMonth:
    """Parse `YYYY-MM` as a month that has ended by `now` in the configured zone.

    Raises ValueError when the text is not a month or the month is not over yet.
    """
    match = _MONTH.fullmatch(value)
    if match is None:
        raise ValueError(f"{value!r} is not a month: give YYYY-MM")
    start = datetime(int(match[1]), int(match[2]), 1, tzinfo=config.zone)
    end = next_month_start(start, config.zone)
    if end > now:
        raise ValueError(
            f"{value} is not over yet in {config.zone.key}: without --month the report "
            "shows the month to date"
        )
    utc = ZoneInfo("UTC")
    utc_end = next_month_start(start.replace(tzinfo=utc), utc)
    # The last microsecond that is in the month both locally and in UTC: the two last days
    # overlap, as no zone is a whole day away from UTC.
    read_at = min(end, utc_end) - timedelta(microseconds=1)
    return ClosedMonth(start, end, read_at)


def closed_month_sources(
    config: Config, sources: list[Source], month: ClosedMonth, policy: RetryPolicy
) -> list[Source]:
    """The configured sources, with OpenCost's fetch reading exactly the closed month."""
    out = []
    for source in sources:
        if source.name == opencost.SOURCE:
            source.close()
            source = _opencost(config, source, month, policy)
        out.append(source)
    return out


def _opencost(config: Config, source: Source, month: ClosedMonth, policy: RetryPolicy) -> Source:
    cfg = section(config.sources.opencost, opencost.SOURCE)
    client = opencost.build_client(cfg)
    seconds, by_node = cfg.refresh_deadline.total_seconds(), config.idle_by_node

    def fetch(now: datetime) -> opencost.OpenCostSnapshot:
        del now  # the month's end, not the instant the other sources read at
        tally = Tally()
        with refresh_budget(policy.start(seconds)):
            rate = opencost.fetch_window(
                client, month.end - cfg.rate_window, month.end, with_node_costs=by_node, tally=tally
            )
            whole = opencost.fetch_window(
                client, month.start, month.end, with_node_costs=by_node, tally=tally
            )
        return opencost.OpenCostSnapshot(rate=rate, month=whole, dropped=tally.frozen())

    return replace(source, fetch=fetch, close=client.close)

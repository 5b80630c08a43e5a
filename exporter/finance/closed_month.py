"""A closed past month for the report: which month, checked to be over, as a source reading.

Every source reads what its `Reading` says (exporter.sources.reading): OpenCost the month's
window [start, end) in the configured zone and its rate window (the GPU-hour price) the last
`rate_window` of the month; LiteLLM its UTC dates from the zone's 1st to the last. Kueue and
DCGM answer with their state now: they keep no history, so a closed month's quota figures
rest on today's quotas, unless `report.prometheus` names where the exporter's own quota
series are kept (exporter.sources.kueue.history).
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from exporter.calendar import Month
from exporter.sources.reading import Reading

__all__ = ["closed_month"]


def closed_month(value: str, zone: ZoneInfo, now: datetime, *, by_day: bool = False) -> Reading:
    """Parse `YYYY-MM` as a month that has ended by `now` in `zone`, as a closed reading.

    Raises ValueError when the text is not a month or the month is not over yet.
    """
    month = Month.parse(value, zone)
    if month.end > now:
        raise ValueError(
            f"{value} is not over yet in {zone.key}: without --month the report "
            "shows the month to date"
        )
    return Reading.closed_month(month, by_day=by_day)

"""A month from OpenCost kept day by day: each local day's set, and their running sums.

The FOCUS export needs the month to date at every local day's end. Reading each of those
windows would read the month once per day; instead the month's days are read once, as
`step=1d` sets, and summed up to any day. OpenCost's steps run forward from the
window start in fixed 24 hours, so a run of 24-hour local days is one read, and a 23- or
25-hour day (a DST change) is read as its own window: at most three reads for a month. The
month to date at every day's end in turn adds each day to running sums once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import httpx
import msgspec

from exporter.errors import UpstreamIncomplete
from exporter.sources.checks import Tally, refuse_dropped
from exporter.sources.http import get_bytes, not_json
from exporter.sources.opencost.days import AGGREGATE
from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.wire import decode_sets

__all__ = ["DaySet", "read_days"]

SOURCE = "opencost"
_DAY = timedelta(days=1)

# One local day: [start, end), its allocations (by name, sorted) and its idle per resource.
DaySet = tuple[datetime, datetime, tuple[Allocation, ...], dict[str, float]]


def read_days(
    client: httpx.Client, days: Sequence[tuple[datetime, datetime]], tally: Tally
) -> list[DaySet]:
    """Every local day of `days` (a month's, or its days to date: the last one may be today so
    far), each as OpenCost's set for it (empty days included)."""
    out: list[DaySet] = []
    for run in _runs(days):
        out.extend(_read_run(client, run, tally))
    return out


def _runs(days: Sequence[tuple[datetime, datetime]]) -> list[list[tuple[datetime, datetime]]]:
    """Consecutive 24-hour days together; a day of another length alone."""
    runs: list[list[tuple[datetime, datetime]]] = []
    for day in days:
        whole = _length(day) == _DAY
        if runs and whole and _length(runs[-1][-1]) == _DAY:
            runs[-1].append(day)
        else:
            runs.append([day])
    return runs


def _length(day: tuple[datetime, datetime]) -> timedelta:
    # Timestamps: two datetimes of one zone subtract as wall time, blind to DST.
    return timedelta(seconds=day[1].timestamp() - day[0].timestamp())


def _read_run(
    client: httpx.Client, run: list[tuple[datetime, datetime]], tally: Tally
) -> list[DaySet]:
    start, end = run[0][0], run[-1][1]
    params = {
        "window": f"{int(start.timestamp())},{int(end.timestamp())}",
        "aggregate": AGGREGATE,
        # Without a step the window is one set: the lone day of another length.
        **({"step": "1d"} if len(run) > 1 else {}),
        "accumulate": "false",
        "includeIdle": "true",
        "shareIdle": "false",
        "includeAggregatedMetadata": "true",
    }
    content = get_bytes(client, SOURCE, "/allocation", params)
    local = Tally()
    try:
        sets = decode_sets(content, _length(run[0]).total_seconds() / 3600.0, local)
    except msgspec.DecodeError:
        raise not_json(SOURCE, "/allocation", content) from None
    refuse_dropped(SOURCE, local, "allocation")
    tally.add(local)
    by_start = {int(day[0].timestamp()): day for day in run}
    found: dict[int, DaySet] = {}
    for written, totals, _ in sets:
        key = _placed(written, by_start)
        merged = totals.build()
        day = by_start[key]
        found[key] = (day[0], day[1], tuple(merged[k] for k in sorted(merged)), totals.idle)
    # OpenCost leaves out a set with nothing in it: that day cost nothing.
    return [found.get(k, (d[0], d[1], (), {})) for k, d in sorted(by_start.items())]


def _placed(written: str | None, by_start: dict[int, tuple[datetime, datetime]]) -> int:
    try:
        key = int(datetime.fromisoformat(written or "").timestamp())
    except ValueError:
        key = -1
    if key not in by_start:
        raise UpstreamIncomplete(
            f"{SOURCE}: /allocation: a daily set's window starts at {written!r}, "
            "which is no local day of the month read"
        )
    return key

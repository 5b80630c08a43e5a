"""A month from OpenCost kept day by day: each local day's set, and their running sums.

The FOCUS export needs the month to date at every local day's end. Reading each of those
windows would read the month once per day; instead the month's days are read once, as
`step=1d` sets, and summed up to any day. OpenCost's steps run forward from the
window start in fixed 24 hours, so a run of 24-hour local days is one read, and a 23- or
25-hour day (a DST change) is read as its own window: at most three reads for a month. The
month to date at every day's end in turn adds each day to running sums once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta

import httpx
import msgspec

from exporter.errors import UpstreamIncomplete
from exporter.sources.checks import Tally, refuse_dropped
from exporter.sources.http import get_bytes, not_json
from exporter.sources.opencost.days import AGGREGATE
from exporter.sources.opencost.records import Allocation, merge_into
from exporter.sources.opencost.wire import decode_sets

__all__ = ["DaySet", "RunningSums", "read_days"]

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


class RunningSums:
    """Days added one at a time, in day order: the allocations summed by name (the first
    labels kept), and idle and node costs per resource, as one left-to-right sum would give."""

    def __init__(self) -> None:
        self._merged: dict[str, Allocation] = {}
        self._idle: dict[str, float] = {}
        self._nodes: dict[str, dict[str, float]] = {}

    def add(
        self,
        allocations: Iterable[Allocation],
        idle: Mapping[str, float],
        node_costs: Mapping[str, Mapping[str, float]] | None = None,
    ) -> None:
        """Add one day."""
        merge_into(self._merged, allocations)
        for resource, amount in idle.items():
            self._idle[resource] = self._idle.get(resource, 0.0) + amount
        for node, costs in (node_costs or {}).items():
            total = self._nodes.setdefault(node, {})
            for resource, amount in costs.items():
                total[resource] = total.get(resource, 0.0) + amount

    def allocations(self) -> tuple[Allocation, ...]:
        """The allocations so far, summed by name, sorted by name."""
        return tuple(self._merged[k] for k in sorted(self._merged))

    def idle(self) -> dict[str, float]:
        """Idle so far per resource."""
        return dict(self._idle)

    def node_costs(self) -> dict[str, dict[str, float]]:
        """Node costs so far per node and resource."""
        return {node: dict(costs) for node, costs in self._nodes.items()}

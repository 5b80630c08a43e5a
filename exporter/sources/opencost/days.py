"""The month to date from OpenCost as daily sets, with the closed days kept between refreshes.

A day before yesterday (in the configured zone) no longer changes, so its cost is read once
and kept, summed by name and packed (packed.py), not as Allocations. Each refresh reads only
the open days, yesterday and today. When a day closes, the days that closed since the last
refresh are read once more and added to what is kept. Every
RECONCILE_EVERY the closed days are read again whole; any record that differs from what was
kept is repaired (the fresh read replaces the kept one) and counted. A new process keeps
nothing, so it reads the month once.

Both reads ask for `step=1d&accumulate=true`: OpenCost builds the same daily sets and sums them
itself, so the closed days, and the two open ones, each travel as one set, not one per day
(at 50,000 allocations a set is about 70 MB).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import httpx
import msgspec

from exporter.errors import UpstreamIncomplete
from exporter.sources.checks import Tally, refuse_dropped
from exporter.sources.http import get_bytes, not_json
from exporter.sources.opencost.packed import PackedAllocations
from exporter.sources.opencost.wire import IDLE_FIELDS, Allocation, Totals, decode_into

__all__ = ["DAY", "RECONCILE_EVERY", "MonthReader", "query", "reader_for", "settled_until"]

SOURCE = "opencost"
AGGREGATE = "node,namespace,controller"
DAY = timedelta(days=1)
# OpenCost rewrites closed days when its ETL rebuilds them (late Prometheus data, a pricing
# change, a restored backup); an hour bounds how long such a rewrite stays unseen, and one
# read of the closed days an hour is what a month read once cost every refresh (5 minutes).
RECONCILE_EVERY = timedelta(hours=1)
# OpenCost rounds each daily set's numbers to 5 decimals; summing 31 rounded days can differ
# from one rounded sum by 31 x 5e-6. A difference above a tenth of a cent is a real change.
_TOLERANCE = 1e-3
_SECOND = timedelta(seconds=1)


@dataclass(frozen=True)
class _Kept:
    """The closed days of one month, summed: what a refresh does not read again."""

    month: datetime  # the month's start
    settled: datetime  # the closed days end here, on the month's 24-hour grid
    allocations: PackedAllocations  # summed by name, packed: not Allocations between reads
    idle: dict[str, float]
    reconciled: datetime  # the instant the closed days were last read whole


class MonthReader:
    """Reads the month to date for one OpenCost client, keeping its closed days."""

    def __init__(self, reconcile_every: timedelta = RECONCILE_EVERY) -> None:
        self.reconcile_every = reconcile_every
        self._kept: _Kept | None = None
        self._open_had_data = False  # the last read of the same open days returned something

    def read(
        self, client: httpx.Client, month: datetime, now: datetime, zone: ZoneInfo, tally: Tally
    ) -> tuple[tuple[Allocation, ...], dict[str, float], int]:
        """The month's allocations and idle, and how many kept records a reconcile repaired."""
        month, now = month.astimezone(UTC), now.astimezone(UTC)
        settled = settled_until(month, now, zone)
        kept, repairs = self._kept, 0
        if kept is None or kept.month != month or settled < kept.settled:
            kept = _closed(client, month, settled, now, tally)
        elif now - kept.reconciled >= self.reconcile_every and settled == kept.settled:
            fresh = _closed(client, month, settled, now, tally)
            if _empty(fresh) and not _empty(kept):
                raise UpstreamIncomplete(
                    f"{SOURCE}: /allocation returned nothing for the closed days of the month, "
                    "which had data; keeping them"
                )
            kept, repairs = fresh, differences(kept, fresh)
        elif settled > kept.settled:
            kept = _fold(kept, _closed(client, kept.settled, settled, now, tally))
        totals = Totals(kept.allocations, kept.idle)
        if now - kept.settled >= _SECOND:  # OpenCost's window is in whole seconds
            query(client, kept.settled, now, step="1d", accumulate=True, tally=tally, into=totals)
        has_data = totals.has_data
        allocations, idle = totals.build(), totals.idle
        same_days = self._kept is not None and self._kept.settled == kept.settled
        if same_days and self._open_had_data and not has_data:
            # Yesterday is over and had data: nothing for it now is a lost read, not zero cost.
            raise UpstreamIncomplete(
                f"{SOURCE}: /allocation returned nothing for yesterday and today, "
                "which had data in the last read; keeping that read"
            )
        self._kept, self._open_had_data = kept, has_data  # only once every read succeeded
        return tuple(allocations[k] for k in sorted(allocations)), idle, repairs


_READERS: weakref.WeakKeyDictionary[httpx.Client, MonthReader] = weakref.WeakKeyDictionary()
_READERS_LOCK = threading.Lock()


def reader_for(client: httpx.Client) -> MonthReader:
    """The reader of `client`: kept days live as long as the client (one per source)."""
    with _READERS_LOCK:
        reader = _READERS.get(client)
        if reader is None:
            reader = _READERS[client] = MonthReader()
        return reader


def settled_until(month: datetime, now: datetime, zone: ZoneInfo) -> datetime:
    """The end of the closed days: the last boundary of the month's 24-hour grid that falls
    at or before the start of yesterday in `zone`.

    OpenCost's steps run forward from the window start in fixed 24 hours, so across a DST
    change the grid sits an hour off local midnight; that only makes one more day open.
    """
    # In UTC: arithmetic on two datetimes of one ZoneInfo is wall-clock, blind to DST.
    first = month.astimezone(UTC)
    yesterday = now.astimezone(zone).date() - DAY
    start = datetime.combine(yesterday, time(), tzinfo=zone).astimezone(UTC)
    if start <= first:
        return first
    return first + DAY * ((start - first) // DAY)


def query(
    client: httpx.Client,
    start: datetime,
    end: datetime,
    *,
    step: str | None,
    accumulate: bool,
    tally: Tally,
    into: Totals,
) -> None:
    """One `/allocation` read of sets of `step` (one set without it), summed when `accumulate`,
    added to `into`.

    Bad records are counted in `tally`, and any one fails the read (refuse_dropped).
    """
    params = {
        "window": f"{int(start.timestamp())},{int(end.timestamp())}",
        "aggregate": AGGREGATE,
        **({"step": step} if step else {}),
        "accumulate": "true" if accumulate else "false",
        "includeIdle": "true",
        "shareIdle": "false",
        "includeAggregatedMetadata": "true",
    }
    content = get_bytes(client, SOURCE, "/allocation", params)
    local = Tally()
    whole = (end - start).total_seconds() / 3600.0
    hours = 24.0 if step == "1d" and not accumulate else whole  # what one set can span
    try:
        decode_into(content, hours, local, into)
    except msgspec.DecodeError:
        raise not_json(SOURCE, "/allocation", content) from None
    del content  # the records are decoded; the body need not outlive them
    refuse_dropped(SOURCE, local, "allocation")
    tally.add(local)


def differences(kept: _Kept, fresh: _Kept) -> int:
    """Snapshots (allocations, and idle per resource) whose cost differs between two reads."""
    names = set(kept.allocations.names()) | set(fresh.allocations.names())
    changed = sum(1 for n in names if not _same(_get(kept, n), _get(fresh, n)))
    return changed + sum(
        1 for r in IDLE_FIELDS if abs(kept.idle.get(r, 0.0) - fresh.idle.get(r, 0.0)) > _TOLERANCE
    )


def _get(kept: _Kept, name: str) -> Allocation | None:
    return kept.allocations.allocation(name) if name in kept.allocations else None


def _same(a: Allocation | None, b: Allocation | None) -> bool:
    if a is None or b is None:
        return a is b
    return (
        (a.namespace, a.node, a.labels, a.namespace_labels)
        == (b.namespace, b.node, b.labels, b.namespace_labels)
        and abs(a.gpu_hours - b.gpu_hours) <= _TOLERANCE
        and all(abs(v - b.costs.get(c, 0.0)) <= _TOLERANCE for c, v in a.costs.items())
        and a.costs.keys() == b.costs.keys()
    )


def _closed(
    client: httpx.Client, start: datetime, end: datetime, now: datetime, tally: Tally
) -> _Kept:
    """The days from `start` to `end`, read whole (nothing when the range is empty)."""
    totals = Totals()
    if end > start:
        query(client, start, end, step="1d", accumulate=True, tally=tally, into=totals)
    return _Kept(start, end, PackedAllocations.of(totals.build().values()), totals.idle, now)


def _fold(kept: _Kept, more: _Kept) -> _Kept:
    allocations = kept.allocations.folded(more.allocations.allocations())
    idle = dict(kept.idle)
    _add(idle, more.idle)
    return _Kept(kept.month, more.settled, allocations, idle, kept.reconciled)


def _add(total: dict[str, float], part: dict[str, float]) -> None:
    for resource, amount in part.items():
        total[resource] = total.get(resource, 0.0) + amount


def _empty(kept: _Kept) -> bool:
    return not len(kept.allocations) and not any(kept.idle.values())

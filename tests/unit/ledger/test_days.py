"""The month to date at every day's end: one result a day, the last the whole month."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from exporter.calendar import Month
from exporter.config.schema import Config
from exporter.ledger.attribution import Attributor
from exporter.ledger.days import month_to_date_by_day
from exporter.ledger.join import join
from exporter.sources.opencost.snapshot import AllocationSet, OpenCostSnapshot
from exporter.sources.opencost.source import parse_allocation_response
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots

MONTH = Month.parse("2026-02", ZoneInfo("UTC"))  # 28 days of 24 hours
CONFIG = Config.model_validate(
    {
        "idle_policy": "proportional",
        "teams": [{"name": "a", "namespaces": ["ns-a"]}, {"name": "b", "namespaces": ["ns-b"]}],
    }
)


def _day(start: datetime, index: int) -> AllocationSet:
    # Team a runs every day; team b only on the first three; idle costs 1 a day.
    data: dict[str, Any] = {
        "n1/ns-a/web": {"properties": {"namespace": "ns-a", "node": "n1"}, "cpuCost": 2.0},
        "__idle__": {"properties": {}, "cpuCost": 1.0},
    }
    if index < 3:
        data["n1/ns-b/job"] = {"properties": {"namespace": "ns-b", "node": "n1"}, "cpuCost": 6.0}
    allocations, idle = parse_allocation_response({"code": 200, "data": [data]})
    return AllocationSet(start, start + timedelta(days=1), allocations, idle)


def _snapshot() -> tuple[OpenCostSnapshot, Reading]:
    days = tuple(_day(start, i) for i, (start, _) in enumerate(MONTH.days()))
    reading = Reading.closed_month(MONTH, by_day=True)
    empty = AllocationSet(MONTH.start, MONTH.end, (), {})
    month = OpenCostSnapshot(rate=empty, month=empty, days=days).as_of(reading).month
    return OpenCostSnapshot(rate=empty, month=month, days=days), reading


def test_one_month_to_date_a_day_the_last_the_whole_month() -> None:
    snapshot, reading = _snapshot()
    results = list(month_to_date_by_day(CONFIG, {"opencost": snapshot}, reading))
    assert [r.reading.until for r in results] == [end for _, end in MONTH.days()]
    whole = join(CONFIG, Attributor(CONFIG), Snapshots(opencost=snapshot), reading)
    assert results[-1].month == whole.month
    # Idle is shared by each month to date's own usage, so day 2's is not day 1's twice.
    first, second = (r.month for r in results[:2])
    assert first is not None and second is not None
    assert first.costs[("a", "idle_share")] == pytest.approx(0.25)  # 1 x 2 / (2 + 6)
    assert second.costs[("a", "idle_share")] == pytest.approx(0.5)


def test_each_day_is_charged_in_detail() -> None:
    snapshot, reading = _snapshot()
    first = next(month_to_date_by_day(CONFIG, {"opencost": snapshot}, reading))
    assert first.consumption.quantities == {}  # no usage measured, only cost
    assert first.joint.by_team == {}  # no dimension configured

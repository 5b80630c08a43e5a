"""FOCUS quantities, hand-worked from what OpenCost returned, through the days and the rows."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from exporter.calendar import Month
from exporter.config.schema import Config
from exporter.finance.focus.days import daily_ledgers
from exporter.finance.focus.rows import FocusContext, focus_rows
from exporter.finance.report.figures import build_report
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.sources.opencost.snapshot import AllocationSet, OpenCostSnapshot
from exporter.sources.opencost.source import parse_allocation_response
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots

GIB = 2**30
MONTH = Month.parse("2026-02", ZoneInfo("UTC"))  # 28 days of 24 hours


def _allocation(ns: str, **fields: float) -> dict[str, Any]:
    return {"properties": {"namespace": ns, "node": "n1"}, **fields}


# What OpenCost returned for the first two days of February (every other day: nothing).
DAY_1 = {
    # Two controllers of team a: 8 and 4 cores all day, 32 GiB and 16 GiB, a 100 GiB volume.
    "n1/ns-a/web": _allocation(
        "ns-a",
        cpuCost=9.6,
        cpuCoreHours=192,
        ramCost=3.2,
        ramByteHours=32 * 24 * GIB,
        pvCost=0.5,
        pvByteHours=100 * 24 * GIB,
        networkCost=0.3,
        networkTransferBytes=3 * GIB,
        gpuCost=33.6,
        gpuHours=24,
    ),
    "n1/ns-a/batch": _allocation(
        "ns-a", cpuCost=4.8, cpuCoreHours=96, ramCost=1.6, ramByteHours=16 * 24 * GIB
    ),
    # Team b: 2 cores for 6 hours, and a network charge OpenCost measured no bytes for.
    "n1/ns-b/job": _allocation("ns-b", cpuCost=0.6, cpuCoreHours=12, networkCost=0.2),
}
DAY_2 = {
    "n1/ns-a/web": _allocation(
        "ns-a", cpuCost=4.8, cpuCoreHours=96, ramCost=1.6, ramByteHours=16 * 24 * GIB
    ),
}


def _day(start: datetime, records: dict[str, Any]) -> AllocationSet:
    allocations, idle = parse_allocation_response({"code": 200, "data": [records]})
    return AllocationSet(start, start + timedelta(days=1), allocations, idle)


def _rows() -> list[Any]:
    config = Config.model_validate(
        {
            "currency": "EUR",
            "idle_policy": "separate",
            "teams": [
                {"name": "a", "namespaces": ["ns-a"]},
                {"name": "b", "namespaces": ["ns-b"]},
            ],
        }
    )
    days = [
        _day(start, DAY_1 if i == 0 else DAY_2 if i == 1 else {})
        for i, (start, _) in enumerate(MONTH.days())
    ]
    reading = Reading.closed_month(MONTH, by_day=True)
    # As the source reads a month by day: its days, and the month they add up to.
    empty = AllocationSet(MONTH.start, MONTH.end, (), {})
    month = OpenCostSnapshot(rate=empty, month=empty, days=tuple(days)).as_of(reading).month
    snapshot = OpenCostSnapshot(rate=empty, month=month, days=tuple(days))
    snapshots = {"opencost": snapshot}
    chargeback = join(config, Attributor(config), Snapshots.of(snapshots), reading)
    assert chargeback.month is not None
    report = build_report(chargeback.month, "EUR", "2026-02", {}, closed=True)
    ctx = FocusContext("EUR", MONTH.start, MONTH.end, "c1", "P", "P", "c1-2026-02")
    return focus_rows(report, daily_ledgers(config, snapshots, reading), ctx)


def test_quantities_are_what_opencost_measured_in_focus_units() -> None:
    got = {
        (r.SubAccountId, r.x_Component, r.x_ChargePeriodLocalDate): (
            r.ChargeCategory,
            r.ConsumedQuantity,
            r.ConsumedUnit,
            r.BilledCost,
        )
        for r in _rows()
    }
    assert got == {
        # 192 + 96 core-hours; (32 + 16) GiB x 24 h; 100 GiB x 24 h; 3 GiB sent.
        ("a", "gpu", "2026-02-01"): ("Usage", "24.0", "GPU-Hours", "33.60"),
        ("a", "cpu", "2026-02-01"): ("Usage", "288.0", "Core-Hours", "14.40"),
        ("a", "ram", "2026-02-01"): ("Usage", "1152.0", "GiB-Hours", "4.80"),
        ("a", "storage", "2026-02-01"): ("Usage", "2400.0", "GiB-Hours", "0.50"),
        ("a", "network", "2026-02-01"): ("Usage", "3.0", "GiB", "0.30"),
        ("a", "cpu", "2026-02-02"): ("Usage", "96.0", "Core-Hours", "4.80"),
        ("a", "ram", "2026-02-02"): ("Usage", "384.0", "GiB-Hours", "1.60"),
        ("b", "cpu", "2026-02-01"): ("Usage", "12.0", "Core-Hours", "0.60"),
        # No bytes measured: a charge without a quantity is no Usage row.
        ("b", "network", "2026-02-01"): ("Adjustment", None, None, "0.20"),
    }


def test_the_quantities_add_up_to_the_months() -> None:
    cpu = sum(Decimal(r.ConsumedQuantity) for r in _rows() if r.x_Component == "cpu")
    assert cpu == 192 + 96 + 12 + 96

"""Cluster-wide samples: idle and cost per resource before any policy, the month in its zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from exporter.calendar import Month
from exporter.config.schema import Config
from exporter.exposition.catalogue.calendar import (
    MONTH_END_TIMESTAMP_SECONDS,
    MONTH_START_TIMESTAMP_SECONDS,
)
from exporter.exposition.catalogue.cluster import (
    CLUSTER_IDLE_COST_PER_HOUR,
)
from exporter.exposition.samples import Sample
from exporter.exposition.series import series
from exporter.exposition.series.calendar import month_samples
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.cluster import cluster_costs
from exporter.ledger.join import join
from exporter.sources.opencost.snapshot import AllocationSet, OpenCostSnapshot
from exporter.sources.opencost.source import parse_allocation_response
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import FIXED_NOW


def _utc(year: int, month: int, day: int, hour: int = 0) -> float:
    return datetime(year, month, day, hour, tzinfo=UTC).timestamp()


def _by(samples: list[Sample], name: str) -> dict[str, float]:
    return {dict(s.labels).get("resource", ""): s.value for s in samples if s.family.name == name}


# OpenCost's older envelope (with "status"), two steps, and idle in both steps, listed after
# the allocation in one of them: not the shape our fake writes.
SETS: Any = [
    {
        "__idle__": {"name": "__idle__", "gpuCost": 0.0, "cpuCost": 3.0, "ramCost": 1.5},
        "n1/ns-a/deployment:train": {
            "name": "n1/ns-a/deployment:train",
            "properties": {"namespace": "ns-a", "node": "n1"},
            "gpuCost": 5.6,
            "gpuHours": 4.0,
            "cpuCost": 0.5,
            "ramCost": 0.25,
            "pvCost": 2.0,
        },
    },
    {
        "n1/ns-a/deployment:train": {
            "name": "n1/ns-a/deployment:train",
            "properties": {"namespace": "ns-a", "node": "n1"},
            "gpuCost": 5.6,
            "gpuHours": 4.0,
            "cpuCost": 0.5,
            "ramCost": 0.25,
        },
        "__idle__": {"name": "__idle__", "gpuCost": 0.0, "cpuCost": 1.0, "ramCost": 0.5},
    },
]
ALLOCATION_BODY: Any = {"code": 200, "status": "success", "data": SETS}


def _window(hours: float, body: Any = ALLOCATION_BODY) -> AllocationSet:
    allocations, idle = parse_allocation_response(body, hours=hours)
    return AllocationSet(FIXED_NOW - timedelta(hours=hours), FIXED_NOW, allocations, idle)


def test_every_gpu_allocated_means_zero_gpu_idle_however_much_cpu_idles() -> None:
    # Two 1-hour steps, so rates are per 2 hours: GPU 11.2 / 2 = 5.6 per hour, none idle;
    # CPU idle (3 + 1) / 2 = 2.0 of (0.5 + 0.5 + 4) / 2 = 2.5; RAM idle 1.0 of 1.25.
    snapshot = OpenCostSnapshot(rate=_window(2.0), month=_window(300.0))
    cluster = cluster_costs(snapshot, 0.0)
    assert cluster.idle_per_hour == pytest.approx({"gpu": 0.0, "cpu": 2.0, "ram": 1.0})
    assert cluster.resource_per_hour == pytest.approx({"gpu": 5.6, "cpu": 2.5, "ram": 1.25})
    # Month to date is the window's total, not a rate.
    assert cluster.idle_month == pytest.approx({"gpu": 0.0, "cpu": 4.0, "ram": 2.0})


def test_a_resource_with_no_idle_entry_reads_zero_not_missing() -> None:
    body = {
        "code": 200,
        "data": [{"n1/ns-a/pod:x": {"properties": {"namespace": "ns-a"}, "gpuCost": 2.0}}],
    }
    snapshot = OpenCostSnapshot(rate=_window(1.0, body), month=_window(10.0, body))
    cluster = cluster_costs(snapshot, 0.0)
    assert cluster.idle_per_hour == {"gpu": 0.0, "cpu": 0.0, "ram": 0.0}
    assert cluster.resource_per_hour is not None
    assert cluster.resource_per_hour["gpu"] == pytest.approx(2.0)


def _bounds(now: datetime, zone: str) -> tuple[float, float]:
    values = {s.family.name: s.value for s in month_samples(Month.of(now, ZoneInfo(zone)))}
    return values[MONTH_START_TIMESTAMP_SECONDS.name], values[MONTH_END_TIMESTAMP_SECONDS.name]


@pytest.mark.parametrize(
    ("now", "zone", "start", "end"),
    [
        # 2026-12-31 12:00 UTC is 2027-01-01 01:00 in Auckland (NZDT, +13): January there,
        # from 2026-12-31 11:00 UTC to 2027-01-31 11:00 UTC, while UTC is still in December.
        (
            datetime(2026, 12, 31, 12, tzinfo=UTC),
            "Pacific/Auckland",
            _utc(2026, 12, 31, 11),
            _utc(2027, 1, 31, 11),
        ),
        # 2027-01-01 03:00 UTC is 2026-12-31 19:00 in Los Angeles (PST, -8): still December
        # there, which ends at 2027-01-01 08:00 UTC, while UTC is already in January.
        (
            datetime(2027, 1, 1, 3, tzinfo=UTC),
            "America/Los_Angeles",
            _utc(2026, 12, 1, 8),
            _utc(2027, 1, 1, 8),
        ),
        # Madrid's March starts at +1 and ends at +2: 743 hours, not 744.
        (
            datetime(2027, 3, 15, tzinfo=UTC),
            "Europe/Madrid",
            _utc(2027, 2, 28, 23),
            _utc(2027, 3, 31, 22),
        ),
        # The very first instant of a month belongs to it.
        (datetime(2026, 11, 1, tzinfo=UTC), "UTC", _utc(2026, 11, 1), _utc(2026, 12, 1)),
    ],
)
def test_month_bounds_follow_the_zone(now: datetime, zone: str, start: float, end: float) -> None:
    assert _bounds(now, zone) == (start, end)


def test_madrid_march_is_743_hours() -> None:
    start, end = _bounds(datetime(2027, 3, 15, tzinfo=UTC), "Europe/Madrid")
    assert (end - start) / 3600 == 743


def test_join_exports_the_bounds_from_its_instant_even_without_sources() -> None:
    config = Config.model_validate({"timezone": "Pacific/Auckland"})
    now = datetime(2026, 12, 31, 12, tzinfo=UTC)
    samples = series(join(config, Attributor(config), Snapshots(), Reading.open(now, config.zone)))
    got = {s.family.name: s.value for s in samples}
    assert got[MONTH_START_TIMESTAMP_SECONDS.name] == _utc(2026, 12, 31, 11)
    assert got[MONTH_END_TIMESTAMP_SECONDS.name] == _utc(2027, 1, 31, 11)
    # No OpenCost, no idle families: absent, not zero.
    assert CLUSTER_IDLE_COST_PER_HOUR.name not in got

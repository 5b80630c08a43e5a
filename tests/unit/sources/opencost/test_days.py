"""OpenCost's settled days in the zone, and closed-day repairs counted across refreshes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from exporter.exposition.catalogue.health import SOURCE_RECONCILE_REPAIRS as REPAIRS
from exporter.exposition.series.health import SourceHealth, health_samples
from exporter.serve.refresher import Refresher
from exporter.serve.schedule import Source
from exporter.sources.opencost import source as opencost
from exporter.sources.opencost.days import settled_until

MADRID = ZoneInfo("Europe/Madrid")
# October 2026 in Madrid: the month starts at 22:00 UTC on 30 September and its clocks go back
# on the 25th, so one day of the month is 25 hours long.
OCTOBER = datetime(2026, 10, 1, tzinfo=MADRID)


def test_settled_days_end_before_yesterday_in_the_zone() -> None:
    noon_15th = datetime(2026, 10, 15, 12, tzinfo=MADRID)
    assert settled_until(OCTOBER, noon_15th, MADRID) == datetime(2026, 10, 14, tzinfo=MADRID)
    assert settled_until(OCTOBER, OCTOBER + timedelta(hours=30), MADRID) == OCTOBER
    # After the clocks go back the 24-hour grid is an hour before local midnight.
    late = datetime(2026, 10, 28, 9, tzinfo=MADRID)
    assert settled_until(OCTOBER, late, MADRID) == datetime(2026, 10, 26, 23, tzinfo=MADRID)


def test_repairs_are_counted_across_refreshes_and_exposed() -> None:
    month = opencost.AllocationSet(OCTOBER, OCTOBER + timedelta(days=1), (), {})
    repairs = iter([2, 0, 3])

    def fetch(now: datetime) -> opencost.OpenCostSnapshot:
        return opencost.OpenCostSnapshot(month, month, repairs=next(repairs))

    instant = datetime(2026, 10, 2, tzinfo=UTC)
    refresher = Refresher(
        [Source("opencost", 300, 1800, fetch)], lambda s, n: [], [], lambda: instant
    )
    for _ in range(3):
        assert refresher.refresh("opencost")
    health = refresher.health()["opencost"]
    assert health.repairs == 5
    (sample,) = (s for s in health_samples({"opencost": health}) if s.family is REPAIRS)
    assert sample.value == 5.0 and sample.labels == (("source", "opencost"),)
    quiet = {s.family for s in health_samples({"dcgm": SourceHealth(True, 0.0, 0.1, {})})}
    assert REPAIRS not in quiet  # a source that keeps no closed days has no such series

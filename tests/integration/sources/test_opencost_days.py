"""The month as daily sets with closed days kept: equal to a full read, repaired by reconcile."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_opencost import FakeOpenCost
from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer
from exporter.calendar import month_start
from exporter.config.schema import Config, OpenCostConfig, SourcesConfig
from exporter.errors import UpstreamIncomplete
from exporter.sources.opencost import source as opencost
from exporter.sources.opencost.days import reader_for, settled_until
from exporter.sources.reading import Reading

MADRID = ZoneInfo("Europe/Madrid")
# October 2026 in Madrid: the month starts at 22:00 UTC on 30 September and its clocks go back
# on the 25th, so one day of the month is 25 hours long.
OCTOBER = datetime(2026, 10, 1, tzinfo=MADRID)
CENT = 0.005


class _Clock:
    """A clock the test moves by hand; the fake and the reads both follow it."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@dataclasses.dataclass
class _Upstream:
    fake: FakeOpenCost
    server: FakeServer
    windows: list[dict[str, str]]

    def client(self) -> httpx.Client:
        return opencost.build_client(OpenCostConfig(url=self.server.url))


@pytest.fixture
def upstream() -> Iterator[_Upstream]:
    fake = FakeOpenCost(CLUSTER, _Clock(OCTOBER))
    windows: list[dict[str, str]] = []

    def handle(request: FakeRequest) -> FakeResponse:
        if request.path == "/allocation":
            windows.append({k: v[0] for k, v in request.query.items()})
        return fake.handle(request)

    server = FakeServer(handle).start()
    yield _Upstream(fake, server, windows)
    server.stop()


def _config(url: str) -> Config:
    return Config(timezone="Europe/Madrid", sources=SourcesConfig(opencost=OpenCostConfig(url=url)))


def _at(upstream: _Upstream, now: datetime) -> datetime:
    clock = upstream.fake.clock
    assert isinstance(clock, _Clock)
    clock.now = now
    return now


def _full(upstream: _Upstream, now: datetime) -> opencost.AllocationSet:
    with upstream.client() as client:
        return opencost.fetch_window(client, month_start(now, MADRID), now)


def _closed_days(upstream: _Upstream, now: datetime) -> opencost.AllocationSet:
    with upstream.client() as client:
        return opencost.fetch_window(client, OCTOBER, settled_until(OCTOBER, now, MADRID))


def _gap(ours: opencost.AllocationSet, full: opencost.AllocationSet) -> float:
    """The largest difference, in money or GPU-hours, of any allocation or idle figure."""
    a = {x.name: x for x in ours.allocations}
    b = {x.name: x for x in full.allocations}
    assert a.keys() == b.keys()
    gaps = [abs(ours.idle.get(r, 0.0) - full.idle.get(r, 0.0)) for r in ("gpu", "cpu", "ram")]
    for name, x in a.items():
        y = b[name]
        assert (x.namespace, x.node, x.labels) == (y.namespace, y.node, y.labels)
        gaps.append(abs(x.gpu_hours - y.gpu_hours))
        gaps.extend(abs(v - y.costs[c]) for c, v in x.costs.items())
    gaps.append(abs(ours.total() - full.total()))
    return max(gaps)


def test_incremental_reads_equal_a_full_read_over_a_month(upstream: _Upstream) -> None:
    config = _config(upstream.server.url)
    client = upstream.client()
    reader_for(client).reconcile_every = timedelta(days=366)  # the kept days alone, no repair
    now = OCTOBER + timedelta(minutes=30)
    checked = 0
    while now < datetime(2026, 11, 1, 20, tzinfo=MADRID):
        upstream.windows.clear()
        snapshot = opencost.KIND.fetch_from_config(
            client, config, Reading.open(_at(upstream, now), config.zone)
        )
        full = _full(upstream, now)
        assert snapshot.month.start == month_start(now, MADRID)
        assert _gap(snapshot.month, full) < CENT, now
        reads = upstream.windows[1:-1]  # between the rate window and the full read
        starts = [int(w["window"].split(",")[0]) for w in reads]
        if now.day > 3 and not (now.month == 11 and now.day == 1):
            # Only the open days (or the days that just closed) are read, never the month.
            assert min(starts) >= (now - timedelta(days=3)).timestamp(), reads
        checked += bool(full.allocations)
        now += timedelta(hours=7, minutes=13)
    assert checked > 90
    client.close()


def test_a_restart_reads_the_month_once(upstream: _Upstream) -> None:
    config = _config(upstream.server.url)
    now = _at(upstream, datetime(2026, 10, 20, 9, tzinfo=MADRID))
    with upstream.client() as client:
        opencost.KIND.fetch_from_config(client, config, Reading.open(now, config.zone))
        first = list(upstream.windows)
        upstream.windows.clear()
        opencost.KIND.fetch_from_config(
            client, config, Reading.open(now + timedelta(minutes=5), config.zone)
        )
        again = list(upstream.windows)
    with upstream.client() as restarted:
        upstream.windows.clear()
        opencost.KIND.fetch_from_config(
            restarted, config, Reading.open(now + timedelta(minutes=10), config.zone)
        )
    month = str(int(OCTOBER.timestamp()))
    yesterday = str(int(datetime(2026, 10, 19, tzinfo=MADRID).timestamp()))
    assert [w["window"].split(",")[0] for w in first[1:]] == [month, yesterday]
    # Both reads come back as one set that OpenCost summed: the closed days, the open days.
    assert first[1]["accumulate"] == first[2]["accumulate"] == "true"
    assert all(w["step"] == "1d" for w in first[1:])
    assert len(again) == 2 and not again[1]["window"].startswith(month)
    assert upstream.windows[1]["window"].startswith(month)  # a new process keeps nothing


def test_reconcile_repairs_rewritten_closed_days_and_counts_them(upstream: _Upstream) -> None:
    config = _config(upstream.server.url)
    now = _at(upstream, datetime(2026, 10, 20, 9, tzinfo=MADRID))
    client = upstream.client()
    assert (
        opencost.KIND.fetch_from_config(client, config, Reading.open(now, config.zone)).repairs == 0
    )
    before = _closed_days(upstream, now)
    # OpenCost rebuilds its past: every GPU-hour of the month now costs more.
    upstream.fake.cluster = dataclasses.replace(CLUSTER, gpu_price=CLUSTER.gpu_price * 1.5)
    after = _closed_days(upstream, now)
    changed = [a.name for a, b in zip(before.allocations, after.allocations, strict=True) if a != b]
    changed += [r for r in ("gpu", "cpu", "ram") if before.idle[r] != after.idle[r]]
    assert changed
    soon = _at(upstream, now + timedelta(minutes=20))
    stale = opencost.KIND.fetch_from_config(client, config, Reading.open(soon, config.zone))
    assert stale.repairs == 0
    assert _gap(stale.month, _full(upstream, soon)) > 1.0  # the kept days are out of date
    later = _at(upstream, now + timedelta(hours=1))
    repaired = opencost.KIND.fetch_from_config(client, config, Reading.open(later, config.zone))
    assert repaired.repairs == len(changed)  # each GPU allocation (and idle, if it moved)
    assert _gap(repaired.month, _full(upstream, later)) < CENT
    assert (
        opencost.KIND.fetch_from_config(
            client, config, Reading.open(later + timedelta(minutes=5), config.zone)
        ).repairs
        == 0
    )
    client.close()


def test_nothing_for_the_open_days_after_data_is_a_lost_read(upstream: _Upstream) -> None:
    config = _config(upstream.server.url)
    now = _at(upstream, datetime(2026, 10, 20, 9, tzinfo=MADRID))
    with upstream.client() as client:
        good = opencost.KIND.fetch_from_config(client, config, Reading.open(now, config.zone))
        upstream.fake.fault = "empty"
        with pytest.raises(UpstreamIncomplete, match="yesterday and today"):
            opencost.KIND.fetch_from_config(
                client, config, Reading.open(now + timedelta(minutes=5), config.zone)
            )
        upstream.fake.fault = ""
        again = opencost.KIND.fetch_from_config(
            client, config, Reading.open(now + timedelta(minutes=10), config.zone)
        )
    assert _gap(again.month, good.month) < 1.0 and again.month.total() >= good.month.total()

"""A closed month from OpenCost by day: few reads, each set placed by its window, days summed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from exporter.calendar import Month
from exporter.config.schema import Config, OpenCostConfig, SourcesConfig
from exporter.errors import UpstreamIncomplete
from exporter.sources.checks import Tally
from exporter.sources.opencost import source as opencost
from exporter.sources.opencost.by_day import read_days
from exporter.sources.reading import Reading

MADRID = ZoneInfo("Europe/Madrid")
OCTOBER = Month.parse("2026-10", MADRID)  # summer time ends on the 25th: a 25-hour day


def _allocation(start: datetime, gpu_cost: float, offset: str = "Z") -> dict[str, Any]:
    stamp = start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S") + offset
    if offset != "Z":  # the same instant, written in the server's own offset
        stamp = start.astimezone(MADRID).isoformat()
    return {
        "properties": {"namespace": "ns-a", "node": "n1", "labels": {"team": "a"}},
        "window": {"start": stamp, "end": "ignored"},
        "gpuHours": 1.0,
        "gpuCost": gpu_cost,
        "cpuCost": 0.5,
    }


def _day_cost(start: datetime) -> float:
    return float(start.astimezone(MADRID).day)  # the 3rd costs 3.0: every day tells itself apart


def _upstream(seen: list[dict[str, str]], *, skip: int | None = None, offset: str = "Z") -> Any:
    def answer(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        seen.append(params)
        start_s, end_s = (int(x) for x in params["window"].split(","))
        start, end = (datetime.fromtimestamp(s, UTC) for s in (start_s, end_s))
        days = [d for d in OCTOBER.days() if start <= d[0] < end]
        sets = []
        # Newest first: a set is placed by its window, never by where it sits in the list.
        for day_start, _ in reversed(days):
            if day_start.astimezone(MADRID).day == skip:
                continue  # OpenCost leaves an empty set out
            alloc = _allocation(day_start, _day_cost(day_start), offset)
            sets.append({"ns-a/web": alloc, "__idle__": {**alloc, "gpuCost": 0.25}})
        return httpx.Response(200, json={"code": 200, "data": sets or None})

    return answer


def _client(answer: Any) -> httpx.Client:
    return httpx.Client(base_url="http://opencost:9003", transport=httpx.MockTransport(answer))


def test_a_month_with_a_dst_change_is_three_reads_placed_by_window() -> None:
    seen: list[dict[str, str]] = []
    with _client(_upstream(seen, offset="+02:00")) as client:
        days = read_days(client, OCTOBER.days(), Tally())
    assert len(days) == 31
    assert [p.get("step") for p in seen] == ["1d", None, "1d"]  # 1st-24th, the 25th, 26th-31st
    assert all(p["accumulate"] == "false" for p in seen)
    for start, _end, allocations, idle in days:
        assert [a.costs["gpu"] for a in allocations] == [_day_cost(start)]
        assert idle["gpu"] == 0.25
    assert (days[24][1].timestamp() - days[24][0].timestamp()) / 3600 == 25.0


def test_an_empty_day_left_out_by_opencost_costs_nothing() -> None:
    with _client(_upstream([], skip=7)) as client:
        days = read_days(client, OCTOBER.days(), Tally())
    seventh = days[6]
    assert seventh[0] == datetime(2026, 10, 7, tzinfo=MADRID)
    assert (seventh[2], seventh[3]) == ((), {})
    assert [a.costs["gpu"] for a in days[7][2]] == [8.0]


def test_a_set_that_is_no_day_of_the_month_fails_the_read() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        stray = _allocation(datetime(2026, 9, 14, tzinfo=MADRID), 1.0)
        return httpx.Response(200, json={"code": 200, "data": [{"ns-a/web": stray}]})

    with _client(answer) as client, pytest.raises(UpstreamIncomplete, match="no local day"):
        read_days(client, OCTOBER.days(), Tally())


def test_the_snapshot_answers_each_days_month_to_date_and_sums_to_the_month() -> None:
    config = Config(
        timezone="Europe/Madrid", sources=SourcesConfig(opencost=OpenCostConfig(url="http://x"))
    )
    reading = Reading.closed_month(OCTOBER, by_day=True)
    with _client(_upstream([])) as client:
        snapshot = opencost.KIND.fetch_from_config(client, config, reading)
    assert len(snapshot.days) == 31
    assert snapshot.month.allocations[0].costs["gpu"] == sum(range(1, 32))
    tenth = snapshot.as_of(reading.day_ends()[9])
    assert tenth.month.allocations[0].costs["gpu"] == sum(range(1, 11))
    assert tenth.month.end == datetime(2026, 10, 11, tzinfo=MADRID)
    assert tenth.month.idle["gpu"] == pytest.approx(2.5)
    assert snapshot.as_of(reading.day_ends()[-1]).month == snapshot.month


def test_every_days_month_to_date_in_one_pass_is_each_days_own() -> None:
    config = Config(
        timezone="Europe/Madrid", sources=SourcesConfig(opencost=OpenCostConfig(url="http://x"))
    )
    reading = Reading.closed_month(OCTOBER, by_day=True)
    with _client(_upstream([])) as client:
        snapshot = opencost.KIND.fetch_from_config(client, config, reading)
    ends = reading.day_ends()
    running = list(snapshot.as_of_each(ends))
    assert len(running) == 31
    # Running sums add each day once, in day order: the same floats as summing from the start.
    assert [r.month for r in running] == [snapshot.as_of(end).month for end in ends]
    assert running[-1].month == snapshot.month

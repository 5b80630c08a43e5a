"""The refresher: failures are isolated per source, a broken join keeps the last exposition."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from datetime import datetime

from exporter.errors import UpstreamPayloadError
from exporter.refresher import Refresher, Source
from exporter.samples import Sample


def _source(name: str, result: list[object]) -> Source:
    def fetch(now: datetime) -> object:
        value = result[0]
        if isinstance(value, Exception):
            raise value
        return value

    return Source(name, interval=0.05, max_staleness=60, fetch=fetch)


def _build(records: Mapping[str, object], now: datetime) -> Iterable[Sample]:
    for name, value in sorted(records.items()):
        yield Sample.of("team_budget", float(value), team=name, kind="gpu")  # type: ignore[arg-type]


def test_one_failing_source_does_not_stop_the_other() -> None:
    good, bad = [1.0], [UpstreamPayloadError("x: garbage")]
    refresher = Refresher([_source("good", good), _source("bad", bad)], _build)
    assert not refresher.refresh_all()
    health = refresher.health()
    assert health["good"].up and not health["bad"].up
    assert health["bad"].errors == {"malformed": 1}
    assert refresher.fresh_records() == {"good": 1.0}


def test_unexpected_exception_is_counted_not_raised() -> None:
    refresher = Refresher([_source("s", [KeyError("boom")])], _build)
    assert not refresher.refresh("s")
    assert refresher.health()["s"].errors == {"error": 1}


def test_broken_join_keeps_the_last_exposition() -> None:
    calls = []

    def build(records: Mapping[str, object], now: datetime) -> Iterable[Sample]:
        calls.append(1)
        if len(calls) > 1:
            raise ZeroDivisionError("a bug")
        return [Sample.of("source_up", 1.0, source="x")]

    refresher = Refresher([_source("s", [1.0])], build)
    refresher.refresh_all()
    before = refresher.exposition
    refresher.refresh_all()
    assert refresher.exposition is before
    assert refresher.build_failures == 1


def test_background_loops_refresh_and_stop() -> None:
    value = [1.0]
    refresher = Refresher([_source("s", value)], _build)
    refresher.start()
    deadline = time.monotonic() + 5
    while b'team="s"} 1.0' not in refresher.exposition.text and time.monotonic() < deadline:
        time.sleep(0.01)
    value[0] = 2.0
    while b'team="s"} 2.0' not in refresher.exposition.text and time.monotonic() < deadline:
        time.sleep(0.01)
    refresher.stop()
    assert b'chargeback_team_budget{kind="gpu",team="s"} 2.0' in refresher.exposition.text

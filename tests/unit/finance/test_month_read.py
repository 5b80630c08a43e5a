"""One read of a month for the report: every source once, a failure left out and said."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from exporter.config.schema import Config, OpenCostConfig, SourcesConfig
from exporter.errors import UpstreamUnavailable
from exporter.finance.month_read import read_month
from exporter.sources.deadline import RetryPolicy
from exporter.sources.kind import SourceKind, nothing_shared
from exporter.sources.readers import SourceReader
from exporter.sources.reading import Reading

CONFIG = Config(sources=SourcesConfig(opencost=OpenCostConfig(url="http://opencost:9003")))
READING = Reading.open(datetime(2026, 11, 15, tzinfo=UTC), ZoneInfo("UTC"))


def _reader(name: str, fetch: Any) -> SourceReader:
    kind = SourceKind(
        name, object, lambda c: c.sources.opencost, nothing_shared, lambda s: httpx.Client(), fetch
    )
    return SourceReader(kind, CONFIG.sources.opencost, None, httpx.Client(), RetryPolicy())


def _down(client: httpx.Client, cfg: object, shared: None, reading: Reading) -> object:
    raise UpstreamUnavailable("kueue: unreachable (ConnectError: refused)")


def _bug(client: httpx.Client, cfg: object, shared: None, reading: Reading) -> object:
    raise KeyError("a bug in a parser")


def test_each_source_is_read_once_and_failures_are_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[Reading] = []

    def good(client: httpx.Client, cfg: object, shared: None, reading: Reading) -> object:
        calls.append(reading)
        return "costs"

    readers = [_reader("opencost", good), _reader("kueue", _down), _reader("dcgm", _bug)]
    read = read_month(readers, READING)
    assert read.snapshots == {"opencost": "costs"}
    assert read.failed == ("kueue", "dcgm") and calls == [READING]
    assert "source=kueue read failed" in caplog.text and "KeyError" in caplog.text


def test_a_replaced_source_is_not_read() -> None:
    readers = [_reader("kueue", _down)]
    read = read_month(readers, READING, {"kueue": "the month's quota history"})
    assert read.snapshots == {"kueue": "the month's quota history"} and read.failed == ()

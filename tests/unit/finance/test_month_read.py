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
from exporter.sources.checks import emptiness_of
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


# --- emptiness confirmed by a second read ---------------------------------------------------------


class _Upstream:
    """Answers with what each read's parts hold, read after read, through `emptiness_of`."""

    def __init__(self, *reads: dict[str, bool]) -> None:
        self.reads = list(reads)
        self.clients: list[httpx.Client] = []

    def fetch(self, client: httpx.Client, cfg: object, shared: None, reading: Reading) -> object:
        del cfg, shared, reading
        self.clients.append(client)
        parts = self.reads.pop(0)
        emptiness_of(client).check("litellm", parts)
        return parts


def _confirming(upstream: _Upstream, *, reopen: bool = True) -> SourceReader:
    kind = SourceKind(
        "litellm",
        object,
        lambda c: c.sources.opencost,
        nothing_shared,
        lambda s: httpx.Client(),
        upstream.fetch,
    )
    again = httpx.Client if reopen else None
    return SourceReader(kind, CONFIG.sources.opencost, None, httpx.Client(), RetryPolicy(), again)


def test_a_read_where_every_part_holds_data_is_read_once() -> None:
    upstream = _Upstream({"the team list": True, "the tag activity": True})
    read = read_month([_confirming(upstream)], READING)
    assert read.snapshots == {"litellm": {"the team list": True, "the tag activity": True}}
    assert len(upstream.clients) == 1 and read.unconfirmed == ()


def test_an_empty_part_is_read_again_on_a_new_client_and_kept_when_the_reads_agree() -> None:
    both = {"the team list": True, "the tag activity": False}
    upstream = _Upstream(both, dict(both))
    read = read_month([_confirming(upstream)], READING)
    assert read.snapshots == {"litellm": both} and read.unconfirmed == ()
    first, second = upstream.clients
    assert first is not second  # the second read keeps nothing from the first


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"the daily activity of 2026-11-02": False}, {"the daily activity of 2026-11-02": True}),
        (
            {"the daily activity of 2026-11-02": False, "the tag activity": True},
            {"the daily activity of 2026-11-02": True, "the tag activity": False},
        ),
    ],
)
def test_reads_that_disagree_on_a_part_are_refused_with_the_part_named(
    first: dict[str, bool], second: dict[str, bool]
) -> None:
    read = read_month([_confirming(_Upstream(first, second))], READING)
    assert read.snapshots == {} and read.failed == ()
    (reason,) = read.unconfirmed
    assert reason.startswith("litellm: the daily activity of 2026-11-02")
    assert "held data in one read and none in the next" in reason
    assert "retry it once litellm answers the same twice" in reason


def test_without_a_new_client_the_same_clients_check_confirms() -> None:
    # A part empty in the first read and still empty in the second: confirmed.
    upstream = _Upstream({"a": True, "b": False}, {"a": True, "b": False})
    read = read_month([_confirming(upstream, reopen=False)], READING)
    assert read.snapshots == {"litellm": {"a": True, "b": False}}
    # One that held data in the first and none in the second: its own check refuses it.
    upstream = _Upstream({"a": True, "b": False}, {"a": False, "b": False})
    read = read_month([_confirming(upstream, reopen=False)], READING)
    (reason,) = read.unconfirmed
    assert reason.startswith("litellm: a came back empty after holding data")
    assert reason.endswith("retry it once litellm answers the same twice")

"""Source readers: one client per configured upstream, each read within its deadline."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from exporter.config.schema import Config, OpenCostConfig, SourcesConfig
from exporter.errors import ConfigError, UpstreamUnavailable
from exporter.sources.deadline import NO_RETRY, RetryPolicy
from exporter.sources.kind import SourceKind
from exporter.sources.readers import SourceReader, open_readers
from exporter.sources.reading import Reading

NOW = datetime(2026, 11, 15, 12, 30, tzinfo=UTC)
CONFIG = Config(sources=SourcesConfig(opencost=OpenCostConfig(url="http://opencost:9003")))


def _kind(fetch: Any) -> SourceKind[Any, Any]:
    return SourceKind("fake", object, lambda c: c.sources.opencost, lambda s: httpx.Client(), fetch)


def test_only_configured_sources_get_a_reader_in_table_order() -> None:
    readers = open_readers(CONFIG)
    try:
        assert [r.name for r in readers] == ["opencost"]
    finally:
        for reader in readers:
            reader.close()


def test_a_bad_client_setting_is_a_config_error_naming_the_source() -> None:
    bad = Config(
        sources=SourcesConfig(
            opencost=OpenCostConfig(url="https://opencost:9003", ca_file="/nonexistent/ca.pem")
        )
    )
    with pytest.raises(ConfigError, match=r"sources\.opencost"):
        open_readers(bad, "config.yaml")


def test_a_read_gets_the_reading_and_fails_past_its_deadline() -> None:
    clock = [0.0]
    seen: list[Reading] = []

    def fetch(client: httpx.Client, config: Config, reading: Reading) -> object:
        seen.append(reading)
        clock[0] += 1000.0  # parsing took longer than the whole refresh may
        return object()

    policy = RetryPolicy(backoff=NO_RETRY, monotonic=lambda: clock[0])
    settings = CONFIG.sources.opencost
    reader = SourceReader(_kind(fetch), settings, CONFIG, httpx.Client(), policy)
    reading = Reading.open(NOW, ZoneInfo("UTC"))
    with pytest.raises(UpstreamUnavailable, match="longer than its deadline") as caught:
        reader.read(reading)
    assert caught.value.reason == "timeout" and seen == [reading]
    quick = replace(reader, kind=_kind(lambda client, config, reading: "snapshot"))
    assert quick.read(reading) == "snapshot"
    reader.close()

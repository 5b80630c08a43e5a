"""Source readers: one client per configured upstream, each read within its deadline; a secret
that cannot be read is a config error with its key and line; decoders' recursion and encoding
errors are the reply's fault (`malformed`), never an unexpected error."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from exporter.cli import main
from exporter.config.schema import Config, OpenCostConfig, SourcesConfig
from exporter.errors import (
    ConfigError,
    UpstreamPayloadError,
    UpstreamStatusError,
    UpstreamUnavailable,
)
from exporter.sources.deadline import NO_RETRY, RetryPolicy
from exporter.sources.kind import SourceKind, nothing_shared
from exporter.sources.readers import SourceReader, open_readers
from exporter.sources.reading import Reading
from exporter.sources.registry import SOURCES
from tests.conftest import CLOCK, FIXED_NOW


@pytest.mark.parametrize(
    ("section", "line", "key"),
    [
        ("litellm:\n    url: http://l\n    currency: EUR\n    api_key_file: {bad}\n", 6,
         "sources.litellm.api_key_file"),
        ("kueue:\n    url: https://k\n    token_file: {bad}\n", 5, "sources.kueue.token_file"),
        ("opencost:\n    url: https://o\n    ca_file: {bad}\n", 5, "sources.opencost.ca_file"),
        ("litellm:\n    url: http://l\n    currency: EUR\n    api_key_env: NOT_SET_HERE_X\n",
         6, "sources.litellm.api_key_env"),
    ],
)  # fmt: skip
def test_an_unreadable_secret_is_a_config_error_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], section: str, line: int, key: str
) -> None:
    folder = tmp_path / "secret"
    folder.mkdir()  # a mounted Secret's key that became a folder
    config = tmp_path / "config.yaml"
    config.write_text("currency: EUR\nsources:\n  " + section.format(bad=folder), "utf-8")
    assert main(["--config.file", str(config), "--check-config"], CLOCK) == 2
    assert capsys.readouterr().err.startswith(f"error: {config}:{line}: {key}: ")


def test_the_reports_token_is_checked_with_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"report:\n  prometheus:\n    url: http://p\n    bearer_token_file: {tmp_path}\n", "utf-8"
    )
    assert main(["--config.file", str(config), "--check-config"], CLOCK) == 2
    assert capsys.readouterr().err.startswith(
        f"error: {config}:4: report.prometheus.bearer_token_file: cannot read secret file"
    )


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        (RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
        (UnicodeDecodeError("utf-8", b"\xe9", 0, 1, "invalid continuation byte"), "not UTF-8"),
    ],
)
def test_a_reply_decoders_cannot_read_is_malformed(raised: Exception, said: str) -> None:
    def fetch(client: httpx.Client, cfg: object, shared: None, reading: Reading) -> object:
        raise raised

    kind: SourceKind[object, None, object] = SourceKind(  # type: ignore[type-var]
        "probe", object, lambda c: None, nothing_shared, lambda s: httpx.Client(), fetch
    )
    config = Config.model_validate({"sources": {"opencost": {"url": "http://o"}}})
    settings = config.sources.opencost
    with httpx.Client() as client:
        reader = SourceReader(kind, settings, None, client, RetryPolicy(clock=CLOCK))
        with pytest.raises(UpstreamPayloadError, match=said) as caught:
            reader.read(Reading.open(FIXED_NOW, config.zone))
    assert caught.value.reason == "malformed"


def test_a_retry_after_the_refresh_could_not_wait_for_rides_on_the_error() -> None:
    asked: list[str] = []

    def limited(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        return httpx.Response(429, json={"error": "slow down"}, headers={"Retry-After": "120"})

    config = Config.model_validate({"sources": {"opencost": {"url": "http://o"}}})
    client = httpx.Client(base_url="http://o", transport=httpx.MockTransport(limited))
    kind = SOURCES["opencost"]
    shared = kind.shared(config)
    reader = SourceReader(kind, config.sources.opencost, shared, client, RetryPolicy(clock=CLOCK))
    with client, pytest.raises(UpstreamStatusError) as caught:
        reader.read(Reading.open(FIXED_NOW, config.zone))
    assert caught.value.retry_after == 120.0
    assert len(asked) == 1  # 120 s is past the refresh's deadline: not asked again in it


NOW = datetime(2026, 11, 15, 12, 30, tzinfo=UTC)
CONFIG = Config(sources=SourcesConfig(opencost=OpenCostConfig(url="http://opencost:9003")))


def _kind(fetch: Any) -> SourceKind[Any, Any, Any]:
    return SourceKind(
        "fake",
        object,
        lambda c: c.sources.opencost,
        nothing_shared,
        lambda s: httpx.Client(),
        fetch,
    )


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

    def fetch(client: httpx.Client, cfg: object, shared: None, reading: Reading) -> object:
        seen.append(reading)
        clock[0] += 1000.0  # parsing took longer than the whole refresh may
        return object()

    policy = RetryPolicy(backoff=NO_RETRY, monotonic=lambda: clock[0])
    settings = CONFIG.sources.opencost
    reader = SourceReader(_kind(fetch), settings, None, httpx.Client(), policy)
    reading = Reading.open(NOW, ZoneInfo("UTC"))
    with pytest.raises(UpstreamUnavailable, match="longer than its deadline") as caught:
        reader.read(reading)
    assert caught.value.reason == "timeout" and seen == [reading]
    quick = replace(reader, kind=_kind(lambda client, cfg, shared, reading: "snapshot"))
    assert quick.read(reading) == "snapshot"
    reader.close()

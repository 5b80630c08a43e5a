"""vLLM source: the span read, one instant for every query, and the snapshot it builds."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from exporter.calendar import Month
from exporter.config.schema import Config
from exporter.errors import UpstreamPayloadError
from exporter.sources.reading import Reading
from exporter.sources.vllm.records import ModelTiming
from exporter.sources.vllm.source import KIND, build_client

NOW = datetime(2026, 11, 15, 12, tzinfo=UTC)
# Per measure, what the fake Prometheus answers for model "llama".
ANSWER = {
    "vllm:request_prefill_time_seconds_sum": "120",
    "vllm:request_decode_time_seconds_sum": "4800",
    "vllm:request_prompt_tokens_sum": "1200000",
    "vllm:request_generation_tokens_sum": "300000",
    "vllm:request_prefill_time_seconds_count": "1000",
}


def _config(**vllm: Any) -> Config:
    return Config.model_validate(
        {"sources": {"vllm": {"url": "http://prom.invalid:9090/", **vllm}}}
    )


def _vector(value: str) -> dict[str, Any]:
    result = [{"metric": {"model_name": "llama"}, "value": [NOW.timestamp(), value]}]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


def _fetch(config: Config, reading: Reading, seen: list[httpx.URL]) -> Any:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        counter = request.url.params["query"].split("increase(")[1].split("[")[0]
        return httpx.Response(200, json=_vector(ANSWER[counter]))

    assert config.sources.vllm is not None
    client = build_client(config.sources.vllm, transport=httpx.MockTransport(answer))
    return KIND.fetch_from_config(client, config, reading)


def test_the_month_to_date_is_read_at_the_reading_instant() -> None:
    seen: list[httpx.URL] = []
    config = _config()
    snapshot = _fetch(config, Reading.open(NOW, config.zone), seen)
    assert snapshot.models == (ModelTiming("llama", 120.0, 4800.0, 1_200_000.0, 300_000.0, 1000.0),)
    # 14.5 days since 1 November 00:00 UTC.
    assert snapshot.span_seconds == 14.5 * 86400
    assert len(seen) == 5
    assert {u.path for u in seen} == {"/api/v1/query"}
    assert {u.params["time"] for u in seen} == {f"{NOW.timestamp():.3f}"}
    assert all(u.params["query"].endswith("[348h]))") for u in seen)
    assert snapshot.dropped == {}


def test_a_closed_month_and_a_fixed_window() -> None:
    seen: list[httpx.URL] = []
    config = _config()
    october = Month.of(datetime(2026, 10, 5, tzinfo=UTC), config.zone)
    _fetch(config, Reading.closed_month(october), seen)
    assert all(u.params["query"].endswith("[31d]))") for u in seen)  # up to its last second
    seen.clear()
    _fetch(_config(window="7d"), Reading.open(NOW, config.zone), seen)
    assert all(u.params["query"].endswith("[7d]))") for u in seen)


def test_a_closed_month_is_read_to_its_end_in_its_own_zone() -> None:
    # October in New York ends at 1 November 04:00 UTC: four hours after the UTC month, where
    # sources without history are read (`Reading.at`); Prometheus keeps the month whole.
    seen: list[httpx.URL] = []
    config = _config()
    zoned = config.model_copy(update={"timezone": "America/New_York"})
    october = Month.of(datetime(2026, 10, 5, 12, tzinfo=UTC), zoned.zone)
    snapshot = _fetch(zoned, Reading.closed_month(october), seen)
    end = datetime(2026, 11, 1, 4, tzinfo=UTC)
    assert {u.params["time"] for u in seen} == {f"{end.timestamp():.3f}"}
    assert all(u.params["query"].endswith("[31d]))") for u in seen)
    assert snapshot.span_seconds == 31 * 86400


def test_an_error_envelope_fails_the_read() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"status": "error", "errorType": "bad_data", "error": "x"})

    config = _config()
    assert config.sources.vllm is not None
    client = build_client(config.sources.vllm, transport=httpx.MockTransport(answer))
    with pytest.raises(UpstreamPayloadError, match="bad_data"):
        KIND.fetch_from_config(client, config, Reading.open(NOW, config.zone))

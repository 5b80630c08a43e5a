"""The vLLM source on the demo's fake Prometheus: hand-worked totals, w = 50, Prometheus JSON."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import httpx

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_vllm import SERVED_MODEL, go_float, make_handler
from chargeback_demo.httpfake import FakeRequest
from chargeback_demo.stack import demo_config_dict
from exporter.config.schema import Config
from exporter.ledger.llm.weights import completion_weights
from exporter.sources.reading import Reading
from exporter.sources.vllm.records import ModelTiming
from exporter.sources.vllm.source import KIND, build_client
from tests.conftest import CLOCK, FIXED_NOW

HANDLE = make_handler(CLUSTER, CLOCK)
URLS = {"opencost": "http://opencost.invalid", "vllm": "http://vllm.invalid"}


def _ask(
    query: str | None, time: str | None = None, path: str = "/api/v1/query"
) -> tuple[int, str]:
    params = {k: [v] for k, v in (("query", query), ("time", time)) if v is not None}
    response = HANDLE(FakeRequest("GET", path, params, {}))
    return response.status, response.body.decode()


def _transport(request: httpx.Request) -> httpx.Response:
    query = parse_qs(request.url.query.decode())
    response = HANDLE(FakeRequest("GET", request.url.path, query, {}))
    return httpx.Response(response.status, content=response.body, headers=response.headers)


def test_the_demo_measures_llama_by_hand() -> None:
    # The month to date at 15 November 12:30 UTC, in Madrid: from 31 October 23:00 UTC, 349.5 h
    # of Llama's 500,000 prompt and 155,000 completion tokens and 380 requests an hour, at
    # 0.25 ms a prompt token and 12.5 ms a completion token.
    config = Config.model_validate(demo_config_dict(URLS))
    assert config.sources.vllm is not None
    client = build_client(config.sources.vllm, transport=httpx.MockTransport(_transport))
    snapshot = KIND.fetch_from_config(client, config, Reading.open(FIXED_NOW, config.zone))
    (timing,) = snapshot.models
    assert timing.model == SERVED_MODEL == "meta-llama/Meta-Llama-3-70B-Instruct"
    expected = ModelTiming(
        SERVED_MODEL, 43_687.5, 677_156.25, 174_750_000.0, 54_172_500.0, 132_810.0
    )
    for got, want in zip(
        (timing.prefill_seconds, timing.decode_seconds, timing.prompt_tokens),
        (expected.prefill_seconds, expected.decode_seconds, expected.prompt_tokens),
        strict=True,
    ):
        assert abs(got - want) < 1e-6 * want
    assert (timing.generation_tokens, timing.requests) == (54_172_500.0, 132_810.0)
    (weight,) = completion_weights(config, snapshot)
    assert (weight.model, weight.asked, weight.basis, weight.fallback) == (
        "llama-3-70b",
        "measured",
        "measured",
        None,
    )
    assert abs(weight.applied - 50.0) < 1e-9 and weight.configured == 3.0


def test_it_speaks_prometheus_json() -> None:
    query = "sum by (model_name) (increase(vllm:request_prompt_tokens_sum[1h]))"
    status, body = _ask(query, "1794744000.5")
    assert status == 200
    # Seconds with their milliseconds, the value as Go spells it: a string, no exponent.
    assert body == (
        '{"status":"success","data":{"resultType":"vector","result":[{"metric":'
        f'{{"model_name":"{SERVED_MODEL}"}},"value":[1794744000.500,"500000"]}}]}}}}'
    )
    assert json.loads(body)["data"]["result"][0]["value"][1] == "500000"


def test_what_it_does_not_hold_answers_as_prometheus_would() -> None:
    # A series vLLM does not expose: no series; a label it has not: one series without it.
    absent = "sum by (model_name) (increase(vllm:num_requests_running[1h]))"
    assert json.loads(_ask(absent)[1])["data"]["result"] == []
    other = "sum by (model) (increase(vllm:request_prefill_time_seconds_count[1h]))"
    (sample,) = json.loads(_ask(other)[1])["data"]["result"]
    assert sample["metric"] == {} and sample["value"][1] == "380"
    # Before vLLM started (the proxy's history begins on 1 October): nothing.
    early = "sum by (model_name) (increase(vllm:request_prompt_tokens_sum[1d]))"
    assert json.loads(_ask(early, "1758000000")[1])["data"]["result"] == []
    status, body = _ask("up")
    assert status == 400 and json.loads(body)["errorType"] == "bad_data"
    assert _ask(None, path="/api/v1/series")[0] == 404


def test_values_are_spelled_as_go_spells_them() -> None:
    assert [go_float(v) for v in (12.0, 0.0002, 926280.0, 0.1 + 0.2, 0.0)] == [
        "12",
        "0.0002",
        "926280",
        "0.30000000000000004",
        "0",
    ]
    assert [go_float(v) for v in (1e-07, 2.5e21, float("nan"), float("-inf"))] == [
        "1e-07",
        "2.5e+21",
        "NaN",
        "-Inf",
    ]

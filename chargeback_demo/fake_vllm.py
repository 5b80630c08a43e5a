"""A fake Prometheus holding vLLM's request histograms for the demo's Llama: GET /api/v1/query.

search serves llama-3-70b on vLLM (cluster.py). What the LiteLLM proxy sends it every hour
(prompt and completion tokens, requests) is what vLLM finishes, and each token takes a fixed
time in the engine: a prompt token 0.25 ms of prefill (a 1,300-token prompt in a third of a
second), a completion token 12.5 ms of decode (80 tokens a second for each request). So the
measured completion weight is 12.5 / 0.25 = 50, against the configured 3.

It answers what the vLLM source asks (exporter/sources/vllm/query.py), one counter's increase
per model, `sum by (<label>) (increase(<counter>[<span>]))`, as Prometheus's HTTP API does: a
`success` envelope with a `vector` of samples whose time is seconds with milliseconds and whose
value is a string in Go's shortest spelling (Prometheus's `jsonutil.MarshalValue`); a query it
cannot parse is a 400 `bad_data`. The counters run from the start of the proxy's spend history
(vLLM started then), so an increase is the exact traffic in the span, none of Prometheus's edge
extrapolation; a series vLLM does not expose, or a grouping label it has not, answers as
Prometheus would (no series; one series without the label).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from chargeback_demo.cluster import Cluster
from chargeback_demo.httpfake import FakeRequest, FakeResponse
from chargeback_demo.litellm_rows import deployment, history_start
from exporter.clock import Clock

__all__ = [
    "DECODE_SECONDS_PER_TOKEN",
    "MODEL",
    "PREFILL_SECONDS_PER_TOKEN",
    "SERVED_MODEL",
    "go_float",
    "make_handler",
]

MODEL = "llama-3-70b"  # as LiteLLM names it
SERVED_MODEL = deployment(MODEL)[1].removeprefix("hosted_vllm/")  # vLLM's model_name
PREFILL_SECONDS_PER_TOKEN = 0.00025
DECODE_SECONDS_PER_TOKEN = 0.0125
_QUERY = re.compile(r"^sum by \((\w+)\) \(increase\(([\w:]+)\[([0-9a-z]+)\]\)\)$")
_DURATION_PART = re.compile(r"([0-9]+)(ms|s|m|h|d|w|y)")
_UNIT = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_FAMILIES = (
    "vllm:request_prefill_time_seconds",
    "vllm:request_decode_time_seconds",
    "vllm:request_prompt_tokens",
    "vllm:request_generation_tokens",
)


def make_handler(cluster: Cluster, clock: Clock) -> Callable[[FakeRequest], FakeResponse]:
    """A request handler speaking Prometheus's instant query API over the demo's vLLM series."""

    def handle(request: FakeRequest) -> FakeResponse:
        if request.path == "/-/ready":
            return FakeResponse(200, b"Prometheus Server is Ready.\n")
        if request.path != "/api/v1/query" or request.method != "GET":
            return FakeResponse(404, b"404 page not found\n", {"Content-Type": "text/plain"})
        now = clock()
        try:
            at = _time(request.arg("time"), now)
            label, counter, span = _parse(request.arg("query") or "")
        except ValueError as exc:
            return _error(str(exc))
        value = _increase(cluster, counter, at - span, min(at, now), history_start(now))
        result = []
        if value is not None:
            metric = {label: SERVED_MODEL} if label == "model_name" else {}
            result.append((metric, value))
        return _vector(at, result)

    return handle


def _parse(query: str) -> tuple[str, str, timedelta]:
    found = _QUERY.match(query.strip())
    if found is None:
        raise ValueError(f'invalid parameter "query": cannot parse {query!r}')
    label, counter, duration = found.groups()
    parts = _DURATION_PART.findall(duration)
    if not parts or "".join(n + u for n, u in parts) != duration:
        raise ValueError(f'invalid parameter "query": bad duration {duration!r}')
    seconds = sum(int(n) * _UNIT[u] for n, u in parts)
    return label, counter, timedelta(seconds=seconds)


def _time(text: str | None, now: datetime) -> datetime:
    if text is None:
        return now
    try:
        return datetime.fromtimestamp(float(text), UTC)
    except (ValueError, OverflowError):
        pass
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f'invalid parameter "time": cannot parse {text!r}') from None


def _increase(
    cluster: Cluster, counter: str, start: datetime, end: datetime, began: datetime
) -> float | None:
    """What `counter` of the served model grew by in (start, end]; None: no series there."""
    family, _, part = counter.rpartition("_")
    if family not in _FAMILIES or part not in ("sum", "count"):
        return None
    start = max(start, began)
    if start >= end:
        return None
    prompt = completion = requests = 0.0
    for traffic, _, hours in cluster.llm_usage(start, end):
        if traffic.model == MODEL:
            prompt += traffic.prompt_per_hour * hours
            completion += traffic.completion_per_hour * hours
            requests += traffic.requests_per_hour * hours
    if part == "count":
        return requests  # each histogram observes every finished request once
    sums = {
        "vllm:request_prefill_time_seconds": prompt * PREFILL_SECONDS_PER_TOKEN,
        "vllm:request_decode_time_seconds": completion * DECODE_SECONDS_PER_TOKEN,
        "vllm:request_prompt_tokens": prompt,
        "vllm:request_generation_tokens": completion,
    }
    return sums[family]


def go_float(value: float) -> str:
    """A sample value as Prometheus writes it: Go's shortest `'f'` spelling, `'e'` beyond."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value != 0 and (abs(value) < 1e-6 or abs(value) >= 1e21):
        mantissa, _, exponent = repr(value).partition("e")
        return f"{mantissa}e{int(exponent):+03d}"  # Go pads the exponent to two digits
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _timestamp(at: datetime) -> str:
    # Prometheus keeps milliseconds and writes them after the seconds only when there are any.
    ms = round(at.timestamp() * 1000)
    seconds, fraction = divmod(ms, 1000)
    return f"{seconds}.{fraction:03d}" if fraction else str(seconds)


def _vector(at: datetime, result: list[tuple[dict[str, str], float]]) -> FakeResponse:
    stamp = _timestamp(at)
    samples = ",".join(
        f'{{"metric":{json.dumps(metric, separators=(",", ":"))},'
        f'"value":[{stamp},"{go_float(value)}"]}}'
        for metric, value in result
    )
    body = f'{{"status":"success","data":{{"resultType":"vector","result":[{samples}]}}}}'
    return FakeResponse(200, body.encode(), {"Content-Type": "application/json"})


def _error(message: str) -> FakeResponse:
    body = json.dumps(
        {"status": "error", "errorType": "bad_data", "error": message}, separators=(",", ":")
    )
    return FakeResponse(400, body.encode(), {"Content-Type": "application/json"})

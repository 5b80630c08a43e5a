"""Prometheus's HTTP query API: one instant query, its envelope checked, as (labels, value) pairs.

Upstream: `GET <url>/api/v1/query?query=...&time=<unix seconds>`. A 4xx or 5xx names the error
type in its body (400 bad_data, 422 execution, 503 timeout or unavailable); a 200 still carries
`status`, and only `"success"` with a `vector` result is an answer.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import httpx
import msgspec

from exporter.errors import UpstreamPayloadError, UpstreamStatusError
from exporter.sources.http import get_bytes, not_json

__all__ = ["instant_vector"]

PATH = "/api/v1/query"


def instant_vector(
    client: httpx.Client, source: str, expr: str, at: datetime
) -> list[tuple[dict[str, str], float]]:
    """The vector `expr` gives at `at`; values as Prometheus spells them (NaN and +-Inf kept)."""
    params = {"query": expr, "time": f"{at.timestamp():.3f}"}
    try:
        content = get_bytes(client, source, PATH, params)
    except UpstreamStatusError as exc:
        raise UpstreamStatusError(f"{exc} (query {expr!r})", exc.status) from None
    try:
        typed = _DECODER.decode(content)
    except (msgspec.ValidationError, msgspec.DecodeError):
        typed = None
    data = typed.data if typed is not None and typed.status == "success" else None
    if data is not None and data.resultType == "vector":
        try:
            return [(s.metric, float(s.value[1])) for s in data.result]
        except ValueError:
            raise UpstreamPayloadError(f"{source}: a vector sample is malformed") from None
    # Anything else is read loosely, to say exactly what is wrong with it.
    try:
        body = json.loads(content.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise not_json(source, PATH, content) from None
    return [_sample(source, item) for item in _result(source, body)]


# A well-formed vector decodes straight into these (at 10,000 GPUs a vector is megabytes).
class _Sample(msgspec.Struct):
    metric: dict[str, str]
    value: tuple[float, str]  # Prometheus spells values as strings: "0.5", "NaN", "+Inf"


class _Data(msgspec.Struct):
    resultType: str
    result: list[_Sample]


class _Body(msgspec.Struct):
    status: str
    data: _Data | None = None


_DECODER = msgspec.json.Decoder(_Body)


def _result(source: str, body: Any) -> list[Any]:
    if not isinstance(body, dict):
        raise UpstreamPayloadError(f"{source}: {PATH} did not return an object")
    if body.get("status") != "success":
        kind = body.get("errorType", "unknown")
        message = str(body.get("error", ""))[:200]
        raise UpstreamPayloadError(f"{source}: Prometheus query failed: {kind}: {message}")
    data = body.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "vector":
        raise UpstreamPayloadError(f"{source}: {PATH} did not return an instant vector")
    result = data.get("result")
    if not isinstance(result, list):
        raise UpstreamPayloadError(f"{source}: {PATH} result is not a list")
    return result


def _sample(source: str, item: Any) -> tuple[dict[str, str], float]:
    try:
        labels, (_, text) = item["metric"], item["value"]
        value = float(text)  # Prometheus spells values as strings: "0.5", "NaN", "+Inf"
    except (KeyError, TypeError, ValueError):
        raise UpstreamPayloadError(f"{source}: a vector sample is malformed") from None
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise UpstreamPayloadError(f"{source}: a vector sample's labels are malformed")
    return labels, value

"""The quota history's reads of Prometheus refuse error envelopes, odd vectors and two tokens."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from exporter.config.schema import ReportPrometheus
from exporter.errors import UpstreamPayloadError
from exporter.sources.kueue.history import _series


def _envelope(body: object) -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=body)

    return httpx.Client(base_url="http://prom", transport=httpx.MockTransport(answer))


def test_error_envelopes_and_odd_vectors_refuse() -> None:
    bad = [
        {"status": "error", "errorType": "execution", "error": "query timed out"},
        {"status": "success", "data": {"resultType": "matrix", "result": []}},
        {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}}]}},
        {
            "status": "success",
            "data": {
                "resultType": "vector",
                "result": [{"metric": {"pod": "a"}, "value": [1, "2"]}],
            },
        },
    ]
    for body in bad:
        with _envelope(body) as client, pytest.raises(UpstreamPayloadError):
            _series(client, "q", datetime.fromtimestamp(1, UTC), selected=False)


def test_config_refuses_two_tokens() -> None:
    with pytest.raises(ValueError, match="at most one"):
        ReportPrometheus(url="http://p", bearer_token_file="/t", bearer_token_env="T")

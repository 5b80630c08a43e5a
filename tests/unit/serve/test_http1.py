"""Request heads parsed whole or refused with the status to answer, and response heads."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from exporter.serve.http1 import BadRequest, Response, parse_head, response_head


def test_a_scrape_head() -> None:
    request = parse_head(
        b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\n"
        b"X-Twice: 1\r\nx-twice: 2\r\nAuthorization:  Basic dTpw \r\n\r\n"
    )
    assert (request.method, request.target, request.path) == ("GET", "/metrics?x=1", "/metrics")
    assert request.header("accept-encoding") == "gzip"
    assert request.header("X-Twice") == "1, 2"
    assert request.header("Authorization") == "Basic dTpw"
    assert request.header("Cookie") is None


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\n", 400),  # no empty line
        (b"GET /metrics\r\n\r\n", 400),  # HTTP/0.9
        (b"GET  /metrics HTTP/1.1\r\n\r\n", 400),
        (b"GET /metrics HTTP/2.0\r\n\r\n", 505),
        (b"GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n", 400),
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400),
        (b"GET /metrics HTTP/1.1\r\nno colon\r\n\r\n", 400),
        (b"GET /metrics HTTP/1.1\r\n" + b"A: b\r\n" * 101 + b"\r\n", 431),
    ],
)
def test_heads_refused(head: bytes, status: int) -> None:
    with pytest.raises(BadRequest) as refused:
        parse_head(head)
    assert refused.value.status == status


def test_response_head() -> None:
    now = datetime(2026, 11, 15, 12, 30, tzinfo=UTC)
    head = response_head(Response(503, b"down\n", headers={"Retry-After": "1"}), "x/1", now)
    assert head == (
        b"HTTP/1.1 503 Service Unavailable\r\nServer: x/1\r\n"
        b"Date: Sun, 15 Nov 2026 12:30:00 GMT\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Length: 5\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"
    )

"""Requests read by h11 whole or refused with the status to answer, and response heads."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from exporter.serve.http1 import (
    MAX_BODY_BYTES,
    MAX_HEAD_BYTES,
    BadRequest,
    RequestReader,
    Response,
    parse_head,
    response_head,
)


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
        (b"GET /metrics HTTP/1.1\r\nno colon\r\n\r\n", 400),
        (b"GET /metrics HTTP/1.1\r\n\r\n", 400),  # HTTP/1.1 without Host (RFC 9112 3.2)
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\nX: \x00\r\n\r\n", 400),
        (b"GET /m\xc3\xa9trics HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nab", 400),  # body cut
        (b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        (b"GET /metrics HTTP/1.1\r\nHost: a\r\n" + b"A: b\r\n" * 100 + b"\r\n", 431),
        (b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"y" * MAX_HEAD_BYTES + b"\r\n\r\n", 431),
        (b"GET / HTTP/1.1\r\nX: " + b"y" * 40_000 + b"\r\n\r\n", 431),  # too large first
        (b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 16385\r\n\r\n", 413),
    ],
)
def test_heads_refused(head: bytes, status: int) -> None:
    with pytest.raises(BadRequest) as refused:
        parse_head(head)
    assert refused.value.status == status


def test_an_obsolete_fold_is_unfolded() -> None:
    # RFC 9112 section 5.2 lets a server replace obs-fold with a space rather than refuse it.
    request = parse_head(b"GET /metrics HTTP/1.1\r\nHost: a\r\nX: b\r\n folded\r\n\r\n")
    assert request.header("X") == "b folded"


def test_a_request_arriving_a_byte_at_a_time() -> None:
    head = b"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
    reader = RequestReader()
    assert all(reader.feed(head[i : i + 1]) is None for i in range(len(head) - 1))
    request = reader.feed(head[-1:])
    assert request is not None and request.header("content-length") == "5"


def test_a_body_within_the_bound_is_read_past_it_refused() -> None:
    chunk = b"%x\r\n" % MAX_BODY_BYTES + b"x" * MAX_BODY_BYTES + b"\r\n"
    head = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert parse_head(head + chunk + b"0\r\n\r\n").method == "POST"
    with pytest.raises(BadRequest) as refused:
        parse_head(head + chunk + b"1\r\nx\r\n0\r\n\r\n")
    assert refused.value.status == 413


def test_what_follows_a_request_is_left_unread() -> None:
    first = b"GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
    request = RequestReader().feed(first + b"GET /b HTTP/1.1\r\nHost: a\r\n\r\nnonsense")
    assert request is not None and request.path == "/a"


def test_the_end_of_stream_before_a_whole_request() -> None:
    reader = RequestReader()
    assert not reader.started
    assert reader.feed(b"GET / HTTP/1.1\r\n") is None
    assert reader.started
    with pytest.raises(BadRequest) as refused:
        reader.feed(b"")
    assert refused.value.status == 400


def test_response_head() -> None:
    now = datetime(2026, 11, 15, 12, 30, tzinfo=UTC)
    head = response_head(Response(503, b"down\n", headers={"Retry-After": "1"}), "x/1", now)
    assert head == (
        b"HTTP/1.1 503 Service Unavailable\r\nServer: x/1\r\n"
        b"Date: Sun, 15 Nov 2026 12:30:00 GMT\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Length: 5\r\nConnection: close\r\nRetry-After: 1\r\n\r\n"
    )

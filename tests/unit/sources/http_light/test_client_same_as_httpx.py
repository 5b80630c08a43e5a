"""The light client and httpx, fed the same bytes, give the same text or the same error.

httpx runs as the exporter builds it (make_client's transport, whose sockets are bounded by
the call), over httpcore's network backend replaced by a script, so both read exactly the
bytes an upstream would have sent, cut wherever the network cut them.
"""

from __future__ import annotations

import gzip
import itertools
import zlib
from collections.abc import Callable
from datetime import timedelta
from unittest import mock

import httpcore
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.errors import UpstreamError
from exporter.sources.clients import make_client
from exporter.sources.deadline import refresh_deadline
from exporter.sources.http import get_text
from exporter.sources.http_light.client import LightClient, LightSettings
from tests.support.properties import examples
from tests.support.scripted_http import Script, ScriptedBackend, ScriptedOpener
from tests.unit.sources.test_http import Stopwatch, policy

URL = "http://10.0.0.7:9400/metrics"
LIMIT = 4096
Outcome = tuple[str, str]


def _outcome(call: Callable[[], str]) -> Outcome:
    with refresh_deadline(policy(Stopwatch(), attempts=1).start(60, LIMIT)):
        try:
            return ("text", call())
        except UpstreamError as exc:
            return (type(exc).__name__, str(exc))


def through_httpx(steps: list[bytes]) -> Outcome:
    backend = ScriptedBackend([Script(list(steps))])
    with mock.patch.object(httpcore, "SyncBackend", lambda: backend):
        client = make_client("", timedelta(seconds=5))
    with client:
        return _outcome(lambda: get_text(client, "dcgm", URL))


def through_light(steps: list[bytes]) -> Outcome:
    settings_ = LightSettings(5.0, True, True, "gpu-chargeback-exporter/test", 4.0)
    light = LightClient(settings_, opener=ScriptedOpener([Script(list(steps))]))
    return _outcome(lambda: light.get_text("dcgm", URL))


def _encoded(body: bytes, coding: str) -> bytes:
    if coding == "gzip":
        return gzip.compress(body)
    if coding == "deflate":
        return zlib.compress(body)
    return body


def _framed(payload: bytes, framing: str, sizes: list[int]) -> tuple[bytes, bytes]:
    if framing == "length":
        return b"Content-Length: %d\r\n" % len(payload), payload
    if framing == "close":
        return b"Connection: close\r\n", payload
    out, at = b"", 0
    for size in [*sizes, len(payload)]:
        piece = payload[at : at + size]
        if piece:
            out += b"%x;ext=1\r\n%s\r\n" % (len(piece), piece)
        at += len(piece)
    return b"Transfer-Encoding: chunked\r\n", out + b"0\r\n\r\n"


@settings(max_examples=examples(300))
@given(
    status=st.sampled_from([200, 200, 200, 404, 500, 503]),
    body=st.one_of(
        st.text(max_size=600).map(str.encode),
        st.binary(max_size=300),
        st.just(b'{"error": {"message": "no GPUs"}}'),
        st.just(b"x" * (LIMIT + 1)),
    ),
    coding=st.sampled_from(["", "gzip", "deflate"]),
    framing=st.sampled_from(["length", "chunked", "close"]),
    content_type=st.sampled_from(
        ["", "text/plain; version=0.0.4; charset=utf-8", "text/plain; charset=latin-1"]
    ),
    sizes=st.lists(st.integers(1, 200), max_size=4),
    cuts=st.lists(st.integers(1, 2000), max_size=8),
    truncate=st.sampled_from([None, None, None, 1, 7]),
)
def test_the_same_bytes_read_the_same_through_both_clients(
    status: int,
    body: bytes,
    coding: str,
    framing: str,
    content_type: str,
    sizes: list[int],
    cuts: list[int],
    truncate: int | None,
) -> None:
    fields, framed = _framed(_encoded(body, coding), framing, sizes)
    head = b"HTTP/1.1 %d Whatever\r\nDate: Fri, 04 Dec 2026 08:00:00 GMT\r\n" % status
    if coding:
        head += b"Content-Encoding: " + coding.encode() + b"\r\n"
    if content_type:
        head += b"Content-Type: " + content_type.encode() + b"\r\n"
    answer = head + fields + b"\r\n" + framed
    if truncate is not None and framing != "close":  # the connection drops inside the body
        answer = answer[: len(head + fields) + 2 + max(len(framed) - truncate, 0)]
    bounds = sorted({0, len(answer), *(c for c in cuts if c < len(answer))})
    steps = [answer[a:b] for a, b in itertools.pairwise(bounds)]
    light, httpx_ = through_light(steps), through_httpx(steps)
    if light[0] == "UpstreamUnavailable" and httpx_[0] == "UpstreamUnavailable":
        # A broken framing is unreachable either way; h11 and the light reader word it apart.
        return
    assert light == httpx_

"""The light client on scripted connections: its request, keep-alive, retries and bounds."""

from __future__ import annotations

import gzip
import ssl
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from exporter.errors import UpstreamError
from exporter.sources.deadline import refresh_deadline
from exporter.sources.http_light.client import LightClient, LightSettings, light_target
from tests.support.scripted_http import Script, ScriptedOpener
from tests.unit.sources.test_http import Stopwatch, policy

URL = "http://10.0.0.7:9400/metrics"
BODY = b'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} 7\n'


def ok(body: bytes = BODY, *fields: bytes) -> bytes:
    extra = b"".join(f + b"\r\n" for f in fields)
    return b"HTTP/1.1 200 OK\r\n%sContent-Length: %d\r\n\r\n%s" % (extra, len(body), body)


def status(code: int, body: bytes = b"", *fields: bytes) -> bytes:
    extra = b"".join(f + b"\r\n" for f in fields)
    return b"HTTP/1.1 %d X\r\n%sContent-Length: %d\r\n\r\n%s" % (code, extra, len(body), body)


def client(opener: ScriptedOpener, *, follow: bool = True, timeout: float = 5.0) -> LightClient:
    settings = LightSettings(timeout, True, follow, "gpu-chargeback-exporter/test", 4.0)
    return LightClient(settings, opener=opener, monotonic=lambda: 0.0)


@contextmanager
def refresh(watch: Stopwatch, seconds: float = 60, max_body: float = 1 << 20) -> Iterator[None]:
    with refresh_deadline(policy(watch).start(seconds, max_body)):
        yield


def test_the_request_is_one_plain_get_with_host_and_the_codings_it_inflates() -> None:
    opener = ScriptedOpener([Script([ok()])])
    assert client(opener).get_text("dcgm", URL) == BODY.decode()
    (sent,) = opener.streams[0].sent
    assert sent.startswith(b"GET /metrics HTTP/1.1\r\nHost: 10.0.0.7:9400\r\n")
    assert b"\r\nAccept-Encoding: gzip, deflate\r\n" in sent and sent.endswith(b"\r\n\r\n")
    assert b"User-Agent: gpu-chargeback-exporter/test\r\n" in sent
    assert opener.opened == [("10.0.0.7", 9400, False)]


@pytest.mark.parametrize(
    ("url", "line", "host"),
    [
        ("https://[fd00::7]:9400/metrics?x=1#f", b"GET /metrics?x=1 ", b"[fd00::7]:9400"),
        ("http://Node-1.example:80", b"GET / ", b"node-1.example"),
        ("http://h?q=%2Fa", b"GET /?q=%2Fa ", b"h"),
    ],
)
def test_a_target_is_sent_as_written(url: str, line: bytes, host: bytes) -> None:
    target = light_target(url)
    assert target is not None
    assert target.request == line + b"HTTP/1.1\r\nHost: " + host + b"\r\n"


@pytest.mark.parametrize(
    "url",
    [
        "http://user:secret@h/metrics",  # httpx's basic auth
        "http://h/a b",
        "http://h/mé",
        "http://h/a/../metrics",
        "http://h/%zz",
        'http://h/"x"',
        "ftp://h/metrics",
        "http://h:99999/metrics",
        "http:///metrics",
    ],
)
def test_a_url_it_would_not_send_as_httpx_does_is_left_to_httpx(url: str) -> None:
    assert light_target(url) is None


def test_a_kept_connection_carries_the_next_get_to_the_same_origin() -> None:
    opener = ScriptedOpener([Script([ok(), ok(b"2\n")]), Script([ok(b"3\n")])])
    light = client(opener)
    assert light.get_text("dcgm", URL) == BODY.decode()
    assert light.get_text("dcgm", URL.replace("metrics", "other")) == "2\n"
    assert light.get_text("dcgm", "http://10.0.0.8:9400/metrics") == "3\n"
    assert len(opener.opened) == 2 and opener.streams[0].closed
    light.close()
    assert opener.streams[1].closed


@pytest.mark.parametrize(
    "answer",
    [
        ok(BODY, b"Connection: close"),
        b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY),
        b"HTTP/1.1 200 OK\r\n\r\n" + BODY,
    ],
)
def test_a_connection_the_answer_does_not_keep_is_closed(answer: bytes) -> None:
    opener = ScriptedOpener([Script([answer]), Script([ok()])])
    light = client(opener)
    light.get_text("dcgm", URL)
    light.get_text("dcgm", URL)
    assert len(opener.opened) == 2 and opener.streams[0].closed


def test_a_kept_connection_gone_stale_while_idle_is_not_used() -> None:
    opener = ScriptedOpener([Script([ok()]), Script([ok()])])
    light = client(opener)
    light.get_text("dcgm", URL)
    opener.streams[0].script.stale = True
    light.get_text("dcgm", URL)
    assert len(opener.opened) == 2


@pytest.mark.parametrize(
    "failure",
    [b"", httpx.ReadError("[Errno 104] Connection reset by peer")],
)
def test_a_kept_connection_closed_as_the_get_went_out_is_retried_once_on_a_new_one(
    failure: bytes | BaseException,
) -> None:
    opener = ScriptedOpener([Script([ok(), failure]), Script([ok(b"fresh\n")])])
    light = client(opener)
    light.get_text("dcgm", URL)
    assert light.get_text("dcgm", URL) == "fresh\n"
    assert len(opener.opened) == 2


def test_a_kept_connection_that_answered_in_part_is_not_retried() -> None:
    opener = ScriptedOpener([Script([ok(), b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nok"])])
    light = client(opener)
    light.get_text("dcgm", URL)
    with pytest.raises(UpstreamError) as caught:
        light.get_text("dcgm", URL)
    assert caught.value.reason == "unreachable"
    assert "received 2 bytes, expected 9" in str(caught.value)
    assert len(opener.opened) == 1


def test_a_new_connection_that_says_nothing_is_unreachable_as_httpx_says_it() -> None:
    with pytest.raises(UpstreamError) as caught:
        client(ScriptedOpener([Script([])])).get_text("dcgm", URL)
    assert str(caught.value) == (
        "dcgm: unreachable (RemoteProtocolError: Server disconnected without sending a response.)"
    )


def test_a_refused_connect_is_retried_with_backoff_then_unreachable() -> None:
    watch = Stopwatch()
    refused = [httpx.ConnectError("[Errno 111] Connection refused") for _ in range(3)]
    opener = ScriptedOpener([*refused])
    with refresh(watch), pytest.raises(UpstreamError) as caught:
        client(opener).get_text("dcgm", URL)
    assert str(caught.value) == "dcgm: unreachable (ConnectError: [Errno 111] Connection refused)"
    assert watch.sleeps == [0.5, 1.0] and len(opener.opened) == 3


def test_a_certificate_that_fails_to_verify_is_not_retried() -> None:
    watch = Stopwatch()
    failure = httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    failure.__cause__ = ssl.SSLCertVerificationError("certificate verify failed")
    opener = ScriptedOpener([failure])
    with refresh(watch), pytest.raises(UpstreamError) as caught:
        client(opener).get_text("dcgm", URL.replace("http:", "https:"))
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value) and watch.sleeps == []
    assert opener.opened == [("10.0.0.7", 9400, True)]


def test_retry_after_is_honoured_within_the_deadline_and_the_connection_kept() -> None:
    watch = Stopwatch()
    opener = ScriptedOpener([Script([status(503, b"busy", b"Retry-After: 3"), ok()])])
    with refresh(watch):
        assert client(opener).get_text("dcgm", URL) == BODY.decode()
    assert watch.sleeps == [3.0] and len(opener.opened) == 1


def test_a_status_is_an_error_naming_the_path_and_the_bodys_message() -> None:
    body = b'{"error": {"message": "no GPUs yet"}}'
    with pytest.raises(UpstreamError) as caught:
        client(ScriptedOpener([Script([status(500, body)])])).get_text("dcgm", URL)
    assert str(caught.value) == "dcgm: HTTP 500 from /metrics: no GPUs yet"
    assert caught.value.reason == "http_5xx"


def test_a_gzip_body_is_inflated_and_cut_at_max_response_size() -> None:
    packed = gzip.compress(BODY * 100)
    opener = ScriptedOpener([Script([ok(packed, b"Content-Encoding: gzip")]) for _ in "ab"])
    watch = Stopwatch()
    with refresh(watch):
        assert client(opener).get_text("dcgm", URL) == (BODY * 100).decode()
    with refresh(watch, max_body=1024), pytest.raises(UpstreamError) as caught:
        client(opener).get_text("dcgm", URL)
    assert str(caught.value) == (
        "dcgm: /metrics: the body is larger than max_response_size (1KiB) after "
        "decompression; not read further"
    )


def test_a_declared_length_over_the_limit_is_refused_unread() -> None:
    opener = ScriptedOpener([Script([b"HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n"])])
    with refresh(Stopwatch(), max_body=1024), pytest.raises(UpstreamError) as caught:
        client(opener).get_text("dcgm", URL)
    assert str(caught.value) == (
        "dcgm: /metrics: Content-Length 4096 is over max_response_size (1KiB); not read"
    )
    assert opener.streams[0].closed


def test_a_body_that_drips_past_the_call_deadline_is_cut_there() -> None:
    watch = Stopwatch()

    def tick() -> None:
        watch.now += 0.4

    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    drips = [b"1\r\nx\r\n"] * 20
    opener = ScriptedOpener([Script([head, *drips], on_recv=tick)])
    with refresh(watch), pytest.raises(UpstreamError) as caught:
        client(opener, timeout=2.0).get_text("dcgm", URL)
    assert str(caught.value) == f"dcgm: GET {URL} passed its call deadline of 2s"
    assert caught.value.reason == "timeout" and opener.streams[0].closed


def test_every_socket_operation_is_given_at_most_the_calls_time() -> None:
    opener = ScriptedOpener([Script([ok()])])
    with refresh(Stopwatch()):
        client(opener, timeout=2.0).get_text("dcgm", URL)
    waits = [*opener.connect_waits, *opener.streams[0].timeouts]
    assert all(wait is not None and 0 < wait <= 2.0 for wait in waits), waits


def test_redirects_are_followed_when_the_config_says_so() -> None:
    moved = status(308, b"", b"Location: /v2/metrics")
    opener = ScriptedOpener([Script([moved, ok()])])
    assert client(opener).get_text("dcgm", URL) == BODY.decode()
    assert opener.streams[0].sent[1].startswith(b"GET /v2/metrics HTTP/1.1\r\n")
    opener = ScriptedOpener([Script([moved])])
    with pytest.raises(UpstreamError) as caught:
        client(opener, follow=False).get_text("dcgm", URL)
    assert str(caught.value).startswith("dcgm: HTTP 308 from /metrics")


def test_endless_redirects_stop_as_httpx_stops_them() -> None:
    opener = ScriptedOpener([Script([status(302, b"", b"Location: /metrics")] * 30)])
    with pytest.raises(httpx.TooManyRedirects):
        client(opener).get_text("dcgm", URL)


@pytest.mark.parametrize(
    ("content_type", "body", "text"),
    [
        (b"text/plain; charset=ISO-8859-1", 'gpu="é"\n'.encode("latin-1"), 'gpu="é"\n'),
        (b"text/plain; charset=no-such-charset", b"ok\n", "ok\n"),
        (b'text/plain; version=0.0.4; charset="utf-8"', b"ok\n", "ok\n"),
    ],
)
def test_the_charset_is_read_from_the_content_type(
    content_type: bytes, body: bytes, text: str
) -> None:
    opener = ScriptedOpener([Script([ok(body, b"Content-Type: " + content_type)])])
    assert client(opener).get_text("dcgm", URL) == text


def test_a_body_that_is_not_its_charsets_text_is_a_payload_error() -> None:
    opener = ScriptedOpener([Script([ok(b"DCGM\xe9\n")])])
    with pytest.raises(UpstreamError) as caught:
        client(opener).get_text("dcgm", URL)
    assert str(caught.value) == "dcgm: /metrics is not utf-8 text (byte 4)"

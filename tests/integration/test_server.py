"""HTTP: cached bytes on the telemetry path, content negotiation, gzip, health and landing page."""

from __future__ import annotations

import gzip
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from exporter.exposition.catalogue.health import SOURCE_UP
from exporter.exposition.render import Exposition, render
from exporter.exposition.samples import Sample
from exporter.serve.server import MetricsServer

EXPOSITION = render([Sample.of(SOURCE_UP, 1.0, source="opencost")])


@pytest.fixture
def base_url() -> Iterator[str]:
    server = MetricsServer(("127.0.0.1", 0), "/custom-metrics", lambda: EXPOSITION)
    server.start()
    yield f"http://127.0.0.1:{server.port}"
    server.stop()


def test_text_format(base_url: str) -> None:
    response = httpx.get(f"{base_url}/custom-metrics", headers={"Accept-Encoding": "identity"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert 'chargeback_source_up{source="opencost"} 1.0' in response.text


def test_openmetrics_when_asked(base_url: str) -> None:
    accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
    response = httpx.get(f"{base_url}/custom-metrics", headers={"Accept": accept})
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    assert response.text.endswith("# EOF\n")


def test_gzip_when_accepted(base_url: str) -> None:
    with httpx.Client() as client:
        request = client.build_request("GET", f"{base_url}/custom-metrics")
        request.headers["Accept-Encoding"] = "gzip"
        response = client.send(request, stream=True)
        raw = b"".join(response.iter_raw())
    assert response.headers["content-encoding"] == "gzip"
    assert b"chargeback_source_up" in gzip.decompress(raw)


def test_health_landing_and_404(base_url: str) -> None:
    assert httpx.get(f"{base_url}/healthz").text == "ok\n"
    landing = httpx.get(f"{base_url}/")
    assert '<a href="/custom-metrics">' in landing.text
    assert httpx.get(f"{base_url}/metrics").status_code == 404


def test_gzip_refused_with_q_zero(base_url: str) -> None:
    with httpx.Client() as client:
        request = client.build_request("GET", f"{base_url}/custom-metrics")
        request.headers["Accept-Encoding"] = "gzip;q=0, identity"
        response = client.send(request, stream=True)
        raw = b"".join(response.iter_raw())
    assert "content-encoding" not in response.headers
    assert raw.startswith(b"# HELP")


def _closed_by_server(sock: socket.socket) -> bool:
    """Read until the server closes; a generous client-side limit only guards against hangs."""
    sock.settimeout(20)
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True


def _raw(port: int, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize("sent", [b"", b"GET /custom-metrics HTTP/1.1\r\nHost: x\r\n"])
def test_a_request_that_does_not_arrive_whole_in_time_is_closed(sent: bytes) -> None:
    # A client that sends nothing, or stops mid-headers, is cut at the request deadline.
    server = MetricsServer(
        ("127.0.0.1", 0), "/custom-metrics", lambda: EXPOSITION, request_timeout=0.3
    )
    server.start()
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as idle:
            idle.sendall(sent)
            assert _closed_by_server(idle)
    finally:
        server.stop()


def test_a_trickle_is_cut_at_the_deadline_for_the_whole_request() -> None:
    # One byte well within any per-read timeout, again and again: only a deadline for the
    # whole request ends it.
    server = MetricsServer(("127.0.0.1", 0), "/metrics", lambda: EXPOSITION, request_timeout=0.5)
    server.start()
    try:
        trickle = b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n" * 20
        with socket.create_connection(("127.0.0.1", server.port)) as slow:
            sent = 0
            for byte in trickle:
                try:
                    slow.sendall(bytes([byte]))
                except OSError:
                    break
                sent += 1
                time.sleep(0.1)
            # The trickle lasts 80 s: the server cut it long before its end, at its deadline.
            assert sent < len(trickle)
            assert _closed_by_server(slow)
    finally:
        server.stop()


def test_idle_connections_past_the_cap_make_room_for_a_scrape() -> None:
    server = MetricsServer(("127.0.0.1", 0), "/metrics", lambda: EXPOSITION, max_connections=8)
    server.start()
    idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(40)]
    try:
        response = httpx.get(f"http://127.0.0.1:{server.port}/metrics", timeout=20)
        assert response.status_code == 200
        # The oldest idle ones were closed to keep the count at the cap.
        assert sum(_closed_by_server(s) for s in idle[:30]) == 30
    finally:
        for sock in idle:
            sock.close()
        server.stop()


def test_bad_requests_are_answered_and_closed(base_url: str) -> None:
    port = int(base_url.rsplit(":", 1)[1])
    assert _raw(port, b"GET /custom-metrics HTTP/2.0\r\n\r\n").startswith(b"HTTP/1.1 505 ")
    assert _raw(port, b"nonsense\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert _raw(port, b"GET / HTTP/1.1\r\nX: " + b"y" * 40_000 + b"\r\n\r\n").startswith(
        b"HTTP/1.1 431 "
    )
    # HTTP/1.1 requires Host (RFC 9112 section 3.2): a request without it is refused.
    assert _raw(port, b"GET /custom-metrics HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    posted = _raw(port, b"POST /custom-metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
    assert posted.startswith(b"HTTP/1.1 405 ") and b"Allow: GET, HEAD" in posted
    head = _raw(port, b"HEAD /custom-metrics HTTP/1.0\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and head.endswith(b"\r\n\r\n")
    assert b"Content-Length: 0" not in head


def test_serves_on_ipv6_loopback() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        server = MetricsServer(("::1", 0), "/metrics", lambda: EXPOSITION)
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback: {exc}")
    server.start()
    try:
        response = httpx.get(f"http://[::1]:{server.port}/metrics", timeout=20)
        assert response.status_code == 200
    finally:
        server.stop()


def test_a_connection_that_flushes_after_close_ends_without_an_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Small socket buffers and a slow reader leave the last, short chunk in asyncio's buffer
    # when the server closes; the transport then ends itself once that chunk is out, and the
    # grace after close must not fail on it (asyncio logged "'NoneType' object has no
    # attribute 'call_soon'" for such scrapes).
    monkeypatch.setattr("exporter.serve.server._CLOSE_GRACE", 0.3)
    big = b"x" * (2 * 1024 * 1024 + 1000)
    server = MetricsServer(("127.0.0.1", 0), "/metrics", lambda: Exposition(big, big, big, big))
    server._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)  # accepted ones inherit
    server.start()
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n")
            received = 0
            while chunk := sock.recv(16384):
                received += len(chunk)
                time.sleep(0.001)
        assert received > len(big)
        time.sleep(0.6)  # past the grace
    finally:
        server.stop()
    assert not [r for r in caplog.records if r.name == "asyncio" and r.levelname == "ERROR"]

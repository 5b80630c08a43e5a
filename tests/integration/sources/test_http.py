"""The HTTP boundary against loopback servers: a dripping upstream is cut at its deadlines."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from datetime import timedelta

import pytest

from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer, text_response
from exporter.config.schema import Config
from exporter.errors import UpstreamError
from exporter.serve.wiring import build_sources, make_refresher
from exporter.sources.clients import make_client
from exporter.sources.http import get_json
from tests.conftest import CLOCK, FIXED_NOW
from tests.unit.sources.test_http import DCGM_TEXT, Stopwatch, policy


class Dripper:
    """Answers every request one byte at a time, `every` seconds apart, in headers or body."""

    def __init__(
        self, phase: str, every: float = 0.05, size: int = 400, tls: ssl.SSLContext | None = None
    ) -> None:
        self.phase, self.every, self.size, self._tls = phase, every, size, tls
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        scheme, host = ("https", "localhost") if tls else ("http", "127.0.0.1")
        self.url = f"{scheme}://{host}:{self._sock.getsockname()[1]}"
        self.head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"X-Padding: {'p' * 200}\r\nContent-Length: {size}\r\n\r\n"
        ).encode()
        self.sent = 0  # bytes of this phase written before the client hung up

    def __enter__(self) -> Dripper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._sock.close()
        self._thread.join(timeout=5)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, raw: socket.socket) -> None:
        with raw:
            try:
                conn = self._tls.wrap_socket(raw, server_side=True) if self._tls else raw
            except OSError:
                return
            with conn:
                self._drip(conn)

    def _drip(self, conn: socket.socket) -> None:
        body = b"[" + b" " * (self.size - 2) + b"]"
        dripped = self.head if self.phase == "headers" else body
        try:
            conn.recv(65536)
            if self.phase == "body":
                conn.sendall(self.head)
            for byte in dripped:
                if self._stop.wait(self.every):
                    return
                conn.sendall(bytes([byte]))
                self.sent += 1
        except OSError:
            return  # the client hung up at its deadline


@pytest.mark.parametrize("phase", ["headers", "body"])
def test_an_upstream_that_drips_is_cut_at_the_call_deadline(phase: str) -> None:
    # Every byte comes well within the read timeout, so only an overall deadline can stop it.
    with (
        Dripper(phase) as server,
        make_client(server.url, timedelta(seconds=0.5)) as client,
        pytest.raises(UpstreamError) as caught,
    ):
        get_json(client, "opencost", "/allocation")
    assert caught.value.reason == "timeout"
    assert str(caught.value) == "opencost: GET /allocation passed its call deadline of 0.5s"
    # Cut in the phase that dripped, long before it would have ended.
    assert server.sent < (len(server.head) if phase == "headers" else server.size) // 2


def test_a_dripping_source_is_down_with_reason_timeout() -> None:
    with Dripper("body") as server:
        config = Config.model_validate(
            {"sources": {"dcgm": {"urls": [f"{server.url}/metrics"], "timeout": "0.3s"}}}
        )
        refresher = make_refresher(config, clock=CLOCK)
        assert not refresher.refresh_all()
        text = refresher.exposition.text.decode()
        refresher.stop()
    assert 'chargeback_source_up{source="dcgm"} 0.0' in text
    assert 'chargeback_source_errors_total{reason="timeout",source="dcgm"} 1.0' in text


def test_a_refresh_past_its_deadline_is_a_timeout_even_when_each_call_is_quick() -> None:
    watch = Stopwatch()

    def slow(request: FakeRequest) -> FakeResponse:
        watch.now += 1.0  # each scrape takes a second of the refresh's 2.5
        return text_response(200, DCGM_TEXT)

    server = FakeServer(slow).start()
    try:
        urls = [f"{server.url}/node-{n}/metrics" for n in range(4)]
        # One call at a time, so each starts with what the calls before it left of the budget.
        dcgm = {"urls": urls, "timeout": "1s", "refresh_timeout": "2.5s", "concurrency": 1}
        config = Config.model_validate({"sources": {"dcgm": dcgm}})
        (source,) = build_sources(config, policy=policy(watch))
        with pytest.raises(UpstreamError) as caught:
            source.fetch(FIXED_NOW)
    finally:
        server.stop()
    assert caught.value.reason == "timeout"
    assert "refresh deadline of 2.5s" in str(caught.value)

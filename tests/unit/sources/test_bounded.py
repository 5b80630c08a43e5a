"""Socket operations bounded by the running call's deadline, checked on a recording backend."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from datetime import timedelta
from typing import Any

import httpcore
import httpx
import pytest

from exporter.sources.bounded import BoundedBackend, call_ends
from exporter.sources.clients import make_client


class _Recording(httpcore.NetworkStream, httpcore.NetworkBackend):
    """A stream and backend that only note the timeouts they are given."""

    def __init__(self) -> None:
        self.timeouts: list[tuple[str, float | None]] = []

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.timeouts.append(("read", timeout))
        return b""

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.timeouts.append(("write", timeout))

    def close(self) -> None:
        pass

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        self.timeouts.append(("tls", timeout))
        return self

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        self.timeouts.append(("connect", timeout))
        return self


def test_every_operation_gets_at_most_what_is_left_of_the_call() -> None:
    inner = _Recording()
    backend = BoundedBackend(inner)
    left = [2.0]
    with call_ends(lambda: left[0]):
        stream = backend.connect_tcp("example.invalid", 443, timeout=5.0)
        left[0] = 1.5
        stream = stream.start_tls(ssl.create_default_context(), "example.invalid", timeout=5.0)
        left[0] = 0.25
        stream.write(b"GET / HTTP/1.1\r\n\r\n", timeout=30.0)
        stream.read(100, timeout=0.1)  # a shorter own timeout stands
        left[0] = -1.0  # past the deadline: the shortest wait, so the read times out at once
        stream.read(100, timeout=None)
    assert inner.timeouts[:4] == [("connect", 2.0), ("tls", 1.5), ("write", 0.25), ("read", 0.1)]
    kind, last = inner.timeouts[4]
    assert kind == "read" and last is not None and 0 < last < 0.01


def test_outside_a_call_the_timeouts_are_httpx_own() -> None:
    inner = _Recording()
    stream = BoundedBackend(inner).connect_tcp("example.invalid", 80, timeout=5.0)
    stream.read(10, timeout=None)
    assert inner.timeouts == [("connect", 5.0), ("read", None)]


class _Silent:
    """A listener that takes connections and the first bytes of each, and never answers."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self.received: list[bytes] = []
        self._open: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self._server.accept()
                self._open.append(conn)
                self.received.append(conn.recv(4096))

    def close(self) -> None:
        for conn in [*self._open, self._server]:
            conn.close()


@pytest.fixture
def silent() -> Iterator[_Silent]:
    listener = _Silent()
    yield listener
    listener.close()


def _ends_by_the_call(client: httpx.Client, url: str) -> None:
    """A call to a server that never answers ends by the call's deadline, not the client's."""
    started = time.monotonic()
    with call_ends(lambda: 0.3 - (time.monotonic() - started)), pytest.raises(httpx.ReadTimeout):
        client.get(url)
    assert time.monotonic() - started < 5


def test_a_client_sends_through_bounded_sockets_and_a_mock_is_left_alone(
    silent: _Silent, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    with make_client(silent.url, timedelta(seconds=30)) as client:
        _ends_by_the_call(client, "/metrics")
    assert silent.received[0].startswith(b"GET /metrics HTTP/1.1")
    mock = httpx.MockTransport(lambda request: httpx.Response(200, text="mocked"))
    with make_client(silent.url, timedelta(seconds=30), transport=mock) as client:
        assert client.get("/metrics").text == "mocked"


def test_a_proxy_the_environment_names_is_bounded_too(
    silent: _Silent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", silent.url)
    monkeypatch.setenv("NO_PROXY", "direct.invalid")
    with make_client("http://upstream.invalid", timedelta(seconds=30)) as client:
        _ends_by_the_call(client, "/metrics")
        assert silent.received[0].startswith(b"GET http://upstream.invalid/metrics HTTP/1.1")
        # A host NO_PROXY names is reached directly: the name does not resolve.
        with pytest.raises(httpx.ConnectError):
            client.get("http://direct.invalid/metrics")
    assert len(silent.received) == 1

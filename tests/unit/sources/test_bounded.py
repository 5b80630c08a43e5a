"""Socket operations bounded by the running call's deadline, checked on a recording backend."""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

import httpcore
import httpx

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


def test_a_mock_transport_is_used_as_given() -> None:
    mock = httpx.MockTransport(lambda request: httpx.Response(200, text="mocked"))
    with make_client("http://upstream", timedelta(seconds=30), transport=mock) as client:
        assert client.get("/metrics").text == "mocked"

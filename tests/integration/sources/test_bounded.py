"""Clients' sockets bounded by the running call's deadline, directly and through a proxy."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest

from exporter.sources.bounded import call_ends
from exporter.sources.clients import make_client
from tests.support.waiting import until


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
    """A call to a server that never answers ends by the call's deadline, not the client's
    (30 s): every socket operation asks what is left of the call, here already nothing."""
    asked: list[float] = []

    def remaining() -> float:
        asked.append(-1.0)
        return -1.0

    with call_ends(remaining), pytest.raises(httpx.TimeoutException):
        client.get(url)
    assert asked, "the sockets never asked the call's deadline"


def test_a_client_sends_through_bounded_sockets(
    silent: _Silent, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    with make_client(silent.url, timedelta(seconds=30)) as client:
        _ends_by_the_call(client, "/metrics")
    # The listener's thread may read the request after the client has given up on it.
    until("the request at the listener", lambda: bool(silent.received))
    assert silent.received[0].startswith(b"GET /metrics HTTP/1.1")


def test_a_proxy_the_environment_names_is_bounded_too(
    silent: _Silent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", silent.url)
    monkeypatch.setenv("NO_PROXY", "direct.invalid")
    with make_client("http://upstream.invalid", timedelta(seconds=30)) as client:
        _ends_by_the_call(client, "/metrics")
        until("the request at the proxy", lambda: bool(silent.received))
        assert silent.received[0].startswith(b"GET http://upstream.invalid/metrics HTTP/1.1")
        # A host NO_PROXY names is reached directly: the name does not resolve.
        with pytest.raises(httpx.ConnectError):
            client.get("http://direct.invalid/metrics")
    assert len(silent.received) == 1

"""Socket operations that never outlast the call they serve: one deadline for every call.

httpx's timeouts bound each socket operation on its own, so an upstream that drips a byte at a
time never trips them. Here every connect, TLS handshake, read and write of a call is given at
most what is left of that call's deadline, so a call ends at its deadline in whatever phase it
is, on a new connection or a kept-alive one, with no thread watching it. The deadline is the
calling thread's (a context variable set around the call); outside a call the operations keep
httpx's own timeouts.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpcore
import httpx

__all__ = ["BoundedBackend", "bound_client", "call_ends"]

# Seconds left of the running call (negative once it has passed), or None outside a call.
_REMAINING: ContextVar[Callable[[], float] | None] = ContextVar("call_remaining", default=None)
# A wait of zero would make the socket non-blocking (an error, not a timeout): the shortest
# wait once the deadline has passed, so the operation fails as a timeout at once.
_PAST = 1e-4


@contextmanager
def call_ends(remaining: Callable[[], float]) -> Iterator[None]:
    """Bound every socket operation in the block by `remaining()` seconds."""
    token = _REMAINING.set(remaining)
    try:
        yield
    finally:
        _REMAINING.reset(token)


def _bounded(timeout: float | None) -> float | None:
    remaining = _REMAINING.get()
    if remaining is None:
        return timeout
    left = max(remaining(), _PAST)
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A connection's stream whose every operation ends by the running call's deadline."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _bounded(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _bounded(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, _bounded(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class BoundedBackend(httpcore.NetworkBackend):
    """httpcore's network backend, its connects and streams bounded by the call's deadline."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(
            host, port, _bounded(timeout), local_address, socket_options
        )
        return _Stream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return _Stream(self._backend.connect_unix_socket(path, _bounded(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def bound_client(client: httpx.Client) -> httpx.Client:
    """Bound the sockets of every connection pool `client` sends through (its own and any
    proxy's); a transport without sockets (a mock) is left as it is.

    httpx builds its pools itself and takes no network backend, so the pools' backend is
    swapped in place, before any connection exists.
    """
    transports = [client._transport, *client._mounts.values()]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if isinstance(backend, httpcore.NetworkBackend) and not isinstance(backend, BoundedBackend):
            pool._network_backend = BoundedBackend(backend)  # type: ignore[union-attr]
    return client

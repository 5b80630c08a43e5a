"""Socket operations that never outlast the call they serve: one deadline for every call.

httpx's timeouts bound each socket operation on its own, so an upstream that drips a byte at a
time never trips them. Here every connect, TLS handshake, read and write of a call is given at
most what is left of that call's deadline, so a call ends at its deadline in whatever phase it
is, on a new connection or a kept-alive one, with no thread watching it. The deadline is the
calling thread's (a context variable set around the call); outside a call the operations keep
httpx's own timeouts. The bounded backend reaches httpcore's pools through httpcore's public
API, by a transport of our own (BoundedTransport): httpx's own transport takes no backend.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from importlib.util import find_spec
from typing import Any

import httpcore
import httpx

__all__ = ["BoundedBackend", "BoundedTransport", "call_ends"]

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


class BoundedTransport(httpx.BaseTransport):
    """httpx's transport over an httpcore pool (direct, or through `proxy`) whose sockets are
    bounded by the running call's deadline.

    httpx's own transport takes no network backend, so this one builds the pool itself, as
    httpx would from the same settings: requests and responses cross unchanged, the body is
    streamed, and httpcore's errors become httpx's.
    """

    def __init__(
        self,
        *,
        verify: ssl.SSLContext | bool,
        limits: httpx.Limits,
        proxy: httpx.Proxy | None = None,
    ) -> None:
        # As httpx makes it: the environment's CA bundle when verifying by default.
        ssl_context = httpx.create_ssl_context(verify=verify)
        # What every pool shares: TLS, the limits, and the sockets bounded by the call.
        shared: dict[str, Any] = {
            "ssl_context": ssl_context,
            "max_connections": limits.max_connections,
            "max_keepalive_connections": limits.max_keepalive_connections,
            "keepalive_expiry": limits.keepalive_expiry,
            "network_backend": BoundedBackend(httpcore.SyncBackend()),
        }
        self._pool: httpcore.ConnectionPool
        if proxy is None:
            self._pool = httpcore.ConnectionPool(**shared)
        elif proxy.url.scheme in ("http", "https"):
            self._pool = httpcore.HTTPProxy(
                proxy_url=_core_url(proxy.url),
                proxy_auth=proxy.raw_auth,
                proxy_headers=proxy.headers.raw,
                proxy_ssl_context=proxy.ssl_context,
                **shared,
            )
        elif proxy.url.scheme in ("socks5", "socks5h"):
            if find_spec("socksio") is None:  # httpcore would fail only at the first request
                raise ImportError("a SOCKS proxy needs the 'socksio' package (httpx[socks])")
            self._pool = httpcore.SOCKSProxy(
                proxy_url=_core_url(proxy.url), proxy_auth=proxy.raw_auth, **shared
            )
        else:
            message = f"proxy {proxy.url.scheme}://: not http, https, socks5 or socks5h"
            raise ValueError(message)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)  # a sync client's request
        sent = httpcore.Request(
            method=request.method,
            url=_core_url(request.url),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors():
            answer = self._pool.handle_request(sent)
        assert isinstance(answer.stream, Iterable)  # a sync pool's response
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(answer.stream),
            extensions=answer.extensions,
        )

    def close(self) -> None:
        self._pool.close()


def _core_url(url: httpx.URL) -> httpcore.URL:
    return httpcore.URL(
        scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
    )


class _Body(httpx.SyncByteStream):
    """A response's body as httpcore streams it, its errors httpx's."""

    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


# httpcore's errors and httpx's have the same names and the same hierarchy.
_ERRORS: dict[type[Exception], type[httpx.HTTPError]] = {
    httpcore.TimeoutException: httpx.TimeoutException,
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.NetworkError: httpx.NetworkError,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
    httpcore.ProtocolError: httpx.ProtocolError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
}


@contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        # The error's own class first, then its bases: the most specific of httpx's errors.
        mapped = next((_ERRORS[k] for k in type(exc).__mro__ if k in _ERRORS), None)
        if mapped is None:
            raise
        raise mapped(str(exc)) from exc

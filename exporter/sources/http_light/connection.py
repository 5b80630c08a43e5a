"""A TCP (or TLS) connection for the light client, each operation given its own timeout.

Failures are httpx's exceptions with httpcore's meanings, so the shared boundary
(exporter/sources/http.py) reads them as it reads httpx's: a connect or TLS handshake that fails
is a ConnectError (its ssl.SSLError kept as the cause, so a certificate that does not verify is
not retried), one that runs out of time a ConnectTimeout; a send a WriteError or WriteTimeout;
a read a ReadError or ReadTimeout.
"""

from __future__ import annotations

import select
import socket
import ssl
from collections.abc import Callable

import httpx

__all__ = ["SocketStream", "open_stream"]

_READ_AT_ONCE = 1 << 16
# A timeout of zero would make the socket non-blocking (an error, not a timeout): the shortest
# wait once a deadline has passed, so the operation fails as a timeout at once.
_PAST = 1e-4


def _seconds(timeout: float | None) -> float | None:
    return None if timeout is None else max(timeout, _PAST)


class SocketStream:
    """One connection's socket, as the response reader reads it."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def send(self, data: bytes, timeout: float | None) -> None:
        """Send all of `data`, within `timeout` seconds in all."""
        try:
            self._sock.settimeout(_seconds(timeout))
            self._sock.sendall(data)
        except TimeoutError as exc:
            raise httpx.WriteTimeout(str(exc) or "timed out") from exc
        except OSError as exc:
            raise httpx.WriteError(str(exc)) from exc

    def recv(self, timeout: float | None) -> bytes:
        """The next bytes that come within `timeout` seconds; b"" once the peer has closed."""
        try:
            self._sock.settimeout(_seconds(timeout))
            return self._sock.recv(_READ_AT_ONCE)
        except TimeoutError as exc:
            raise httpx.ReadTimeout(str(exc) or "timed out") from exc
        except OSError as exc:
            raise httpx.ReadError(str(exc)) from exc

    def stale(self) -> bool:
        """Whether an idle connection has something to read: the peer closed it (or sent what
        no request asked for), so it must not carry the next request."""
        if isinstance(self._sock, ssl.SSLSocket) and self._sock.pending():
            return True
        try:
            poll = select.poll()
            poll.register(self._sock, select.POLLIN)
            return bool(poll.poll(0))
        except (OSError, ValueError):  # closed under us
            return True

    def close(self) -> None:
        """Close the connection."""
        self._sock.close()


def open_stream(
    host: str, port: int, tls: ssl.SSLContext | None, wait: Callable[[], float | None]
) -> SocketStream:
    """A connection to host:port (TLS when `tls` is given): the connect, then the TLS
    handshake, each within `wait()` seconds as each begins (httpcore bounds both by its
    connect timeout)."""
    try:
        sock = socket.create_connection((host, port), timeout=_seconds(wait()))
    except TimeoutError as exc:
        raise httpx.ConnectTimeout(str(exc) or "timed out") from exc
    except OSError as exc:
        raise httpx.ConnectError(str(exc)) from exc
    try:
        # One request a connection at a time: no reason to hold its last bytes back (httpcore).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            sock.settimeout(_seconds(wait()))
            sock = tls.wrap_socket(sock, server_hostname=host)
    except TimeoutError as exc:
        sock.close()
        raise httpx.ConnectTimeout(str(exc) or "timed out") from exc
    except OSError as exc:  # ssl.SSLError included: a certificate that did not verify
        sock.close()
        raise httpx.ConnectError(str(exc)) from exc
    return SocketStream(sock)

"""HTTP serving on one event loop: no client, idle, slow or failing to log in, holds a thread.

h11 parses each request (exporter/serve/http1.py); this listener keeps the protections around
it, each with its test (tests/integration/test_server.py, test_listener.py, test_server_tls.py,
tests/unit/serve/test_http1*.py):

- Deadline for the whole request: the TLS handshake, head and body must arrive within
  `request_timeout` (a trickle of in-time bytes is still cut), else the connection is aborted.
- Deadline for the whole answer: `write_timeout`, with at most one chunk queued per connection.
- Bounded request: head at most MAX_HEAD_BYTES and 100 headers (431), body at most
  MAX_BODY_BYTES (413); h11 is fed a few KiB at a time, so it never buffers much past that.
- Refusals (400, 413, 431, 501, 505) are answered and closed; HTTP/1.1 without Host, both
  Content-Length and Transfer-Encoding, conflicting lengths and NULs are refused.
- No keep-alive: one request per connection, answered with `Connection: close`; what a client
  pipelines after it is never read.
- Connection cap: past `max_connections` the oldest connection still sending its request, from
  the peer with the most of those, is closed (else the oldest refused login), so a pile of idle
  sockets cannot keep a scrape out.
- Login lane: bcrypt checks run one at a time at the lowest priority in a thread of their own
  with a queue of AUTH_QUEUE (more wait REFUSAL_DELAY and get 429); a credential accepted
  before is checked without bcrypt, so failed logins never hold up a scrape.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from exporter import __version__
from exporter.clock import Clock, system_clock
from exporter.config.basic_auth import BasicAuth
from exporter.exposition.render import Exposition
from exporter.serve.http1 import (
    MAX_HEAD_BYTES,
    BadRequest,
    Request,
    RequestReader,
    Response,
    response_head,
)
from exporter.serve.pages import Page
from exporter.serve.routes import HEALTH_PATH, Health, Routes, gzip_accepted

__all__ = [
    "AUTH_QUEUE",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_WRITE_TIMEOUT",
    "MetricsServer",
    "gzip_accepted",
    "parse_listen_address",
]

log = logging.getLogger(__name__)

DEFAULT_REQUEST_TIMEOUT = 10.0  # seconds for the whole request, from accept to its empty line
DEFAULT_WRITE_TIMEOUT = 60.0  # seconds for the whole answer: megabytes to a slow Prometheus
# Open at once. Each TLS connection holds a 256 KiB read buffer of asyncio's: 64 MiB at most.
DEFAULT_MAX_CONNECTIONS = 256
AUTH_QUEUE = 8  # bcrypt checks queued at once; more are refused (429)
# Seconds a refused login waits for its 429: a flood then costs the attacker time, not us CPU.
REFUSAL_DELAY = 1.0
SERVER = f"gpu-chargeback-exporter/{__version__}"
_BACKLOG = 1024
_CHUNK = 64 * 1024  # bytes handed to a socket at a time: a slow reader holds no more than this
_READ = 4096  # bytes taken from a connection at a time while its request arrives
_CLOSE_GRACE = 2.0  # seconds a closing connection may take to flush or say TLS goodbye
_TICK = 0.05


def parse_listen_address(value: str) -> tuple[str, int]:
    """Split `host:port`: `:port` is every interface (""), `[::1]:port` an IPv6 address."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"listen address must be host:port, got {value!r}")
    if host.startswith("[") and host.endswith("]") and len(host) > 2:
        host = host[1:-1]
    elif ":" in host or "[" in host or "]" in host:
        raise ValueError(f"an IPv6 address goes in brackets, as in [::1]:10290, got {value!r}")
    return host, int(port)


def _listen(address: tuple[str, int]) -> socket.socket:
    host, port = address
    if not host:
        if socket.has_dualstack_ipv6():
            return socket.create_server(
                ("::", port), family=socket.AF_INET6, dualstack_ipv6=True, backlog=_BACKLOG
            )
        host = "0.0.0.0"
    family, _, _, _, where = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    return socket.create_server(where, family=family, backlog=_BACKLOG)


class _Connection:
    """One accepted connection, while the server counts it."""

    __slots__ = ("number", "peer", "writer")
    _numbers = itertools.count()

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.number = next(self._numbers)  # in order of arrival
        self.writer = writer
        peer = writer.get_extra_info("peername")
        self.peer = str(peer[0]) if peer else ""


class MetricsServer:
    """Serves what `Routes` answers from rendered bytes; it never computes or calls upstream.

    Args:
        tls: when given, every connection is TLS with this context.
        auth: when given, every request needs a user and password it allows (else 401).
        healthz_without_auth: /healthz (and only it) answers without auth, for probes.
        request_timeout: seconds from accept until the request's last header has arrived.
        write_timeout: seconds a client may take to read the whole answer.
        max_connections: connections open at once (the oldest idle ones make room).
        pages, rendered, health: see Routes.
        clock: dates the answers.
    """

    def __init__(
        self,
        address: tuple[str, int],
        telemetry_path: str,
        exposition: Callable[[], Exposition],
        *,
        tls: ssl.SSLContext | None = None,
        auth: BasicAuth | None = None,
        healthz_without_auth: bool = False,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        write_timeout: float = DEFAULT_WRITE_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        pages: Sequence[Page] = (),
        rendered: Callable[[str], bytes | None] = lambda name: None,
        health: Health | None = None,
        clock: Clock = system_clock,
    ) -> None:
        extra = {} if health is None else {"health": health}
        self._routes = Routes(telemetry_path, exposition, pages, rendered, **extra)
        self._tls = tls
        self._auth = auth
        self._healthz_without_auth = healthz_without_auth
        self._request_timeout = request_timeout
        self._write_timeout = write_timeout
        self._max_connections = max_connections
        self._clock = clock
        self._sock = _listen(address)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._done: asyncio.Event | None = None
        self._stopping = threading.Event()
        self._finished = threading.Event()
        self._started = False
        self._open = 0
        # Connections still sending their request, by peer, oldest first: what eviction takes
        # first; then the refused logins waiting for their 429.
        self._waiting: dict[str, OrderedDict[_Connection, None]] = {}
        self._refused: OrderedDict[_Connection, None] = OrderedDict()
        self._checking = 0  # requests in the bcrypt lane, queued or running
        self._bcrypt = ThreadPoolExecutor(1, "bcrypt", initializer=_yield_the_cpu)

    @property
    def port(self) -> int:
        """The port actually bound (useful when asked for port 0)."""
        return int(self._sock.getsockname()[1])

    def start(self) -> None:
        """Serve in a background thread."""
        self._started = True
        threading.Thread(target=self._run, daemon=True, name="http").start()

    def serve_forever(self) -> None:
        """Serve in the calling thread until stopped."""
        self._started = True
        self._run()

    def stop(self) -> None:
        """Stop serving, close every connection and release the port."""
        self._stopping.set()
        loop, done = self._loop, self._done
        if loop is not None and done is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed already
                loop.call_soon_threadsafe(done.set)
        if not self._started:
            self._sock.close()
            return
        # Short sleeps, not Event.wait(timeout): libfaketime does not intercept sem_clockwait.
        while not self._finished.is_set():
            time.sleep(_TICK)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        finally:
            self._sock.close()
            self._bcrypt.shutdown(wait=False, cancel_futures=True)
            self._finished.set()

    async def _main(self) -> None:
        self._done = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        if self._stopping.is_set():
            return
        server = await asyncio.start_server(self._connection, sock=self._sock, limit=MAX_HEAD_BYTES)
        async with server:
            await self._done.wait()
            server.close()
            for waiting in [*self._waiting.values(), self._refused]:
                for connection in list(waiting):
                    connection.writer.transport.abort()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = _Connection(writer)
        self._admit(connection)
        try:
            await self._serve(connection, reader, writer)
        except Exception as exc:  # noqa: BLE001 - one client's failure never stops the server
            log.debug("connection from %s ended: %s: %s", connection.peer, type(exc).__name__, exc)
            writer.transport.abort()
        finally:
            self._received(connection)
            self._refused.pop(connection, None)
            self._open -= 1
            await _close(writer)

    def _admit(self, connection: _Connection) -> None:
        self._open += 1
        self._waiting.setdefault(connection.peer, OrderedDict())[connection] = None
        if self._open <= self._max_connections:
            return
        # The peer with the most connections still sending gives up its oldest one (the new
        # one at worst), or else the oldest refused login.
        waiting = sum(map(len, self._waiting.values()))
        if waiting == 1 and self._refused:
            victim, _ = self._refused.popitem(last=False)
        else:
            # Ties go to the peer whose oldest connection is the oldest.
            busiest = max(self._waiting.values(), key=lambda w: (len(w), -next(iter(w)).number))
            victim = next(iter(busiest))
        self._received(victim)
        log.debug("%d connections open: closing an idle one from %s", self._open, victim.peer)
        victim.writer.transport.abort()

    def _received(self, connection: _Connection) -> None:
        waiting = self._waiting.get(connection.peer)
        if waiting is not None:
            waiting.pop(connection, None)
            if not waiting:
                del self._waiting[connection.peer]

    async def _serve(
        self, connection: _Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            async with asyncio.timeout(self._request_timeout):
                if self._tls is not None:
                    await writer.start_tls(self._tls)
                request = await _receive(reader)
        except TimeoutError:
            log.debug("%s sent no whole request within %gs", connection.peer, self._request_timeout)
            writer.transport.abort()
            return
        except BadRequest as exc:
            self._received(connection)
            await self._send(writer, "GET", Response(exc.status, f"{exc}\n".encode()))
            return
        self._received(connection)
        response = await self._denied(connection, request)
        if response is None:
            try:
                response = self._routes.answer(request)
            except Exception:
                log.exception("answering %s failed", request.path)
                response = Response(500, b"Internal server error\n")
        await self._send(writer, request.method, response)

    async def _denied(self, connection: _Connection, request: Request) -> Response | None:
        """401 (or 429 when too many logins wait) unless the request's credential is good."""
        if self._auth is None:
            return None
        # The same path Routes answers health on, so nothing else can slip through unasked.
        if self._healthz_without_auth and request.path == HEALTH_PATH:
            return None
        header = request.header("Authorization")
        allowed = self._auth.quick(header)
        if allowed is None:
            if self._checking >= AUTH_QUEUE:
                self._refused[connection] = None
                await asyncio.sleep(REFUSAL_DELAY)
                self._refused.pop(connection, None)
                return Response(429, b"Too many logins at once\n", headers={"Retry-After": "1"})
            self._checking += 1
            try:
                loop = asyncio.get_running_loop()
                allowed = await loop.run_in_executor(self._bcrypt, self._auth.allows, header)
            finally:
                self._checking -= 1
        if allowed:
            return None
        return Response(401, b"Unauthorized\n", headers={"WWW-Authenticate": "Basic"})

    async def _send(self, writer: asyncio.StreamWriter, method: str, response: Response) -> None:
        head = response_head(response, SERVER, self._clock())
        # Nothing queued beyond one chunk: a client that does not read holds no more memory.
        writer.transport.set_write_buffer_limits(high=_CHUNK, low=0)
        async with asyncio.timeout(self._write_timeout):
            writer.write(head)
            if method != "HEAD":
                body = memoryview(response.body)
                for start in range(0, len(body), _CHUNK):
                    writer.write(body[start : start + _CHUNK])
                    await writer.drain()
            await writer.drain()


async def _receive(reader: asyncio.StreamReader) -> Request:
    """Read until h11 has a whole request (the caller bounds the time), or raise BadRequest."""
    parser = RequestReader()
    while True:
        data = await reader.read(_READ)
        if not data and not parser.started:
            raise EOFError("closed before sending anything")  # a TCP probe: nothing to answer
        request = parser.feed(data)
        if request is not None:
            return request


def _yield_the_cpu() -> None:
    """Run bcrypt at the lowest priority: the thread answering scrapes gets the CPU first."""
    with contextlib.suppress(OSError, AttributeError):  # Linux sets it per thread
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


async def _close(writer: asyncio.StreamWriter) -> None:
    transport = writer.transport
    if transport.is_closing():
        return
    transport.close()
    # A peer that never takes the last bytes or never answers TLS's goodbye is cut off. Not
    # a timer calling abort(): a transport that flushes its last bytes after close() ends
    # itself, and abort() on it then fails inside asyncio (3.11: "'NoneType' object has no
    # attribute 'call_soon'"), so abort only one still open when the grace is over.
    try:
        async with asyncio.timeout(_CLOSE_GRACE):
            await writer.wait_closed()
    except TimeoutError:
        transport.abort()
    except Exception:  # noqa: BLE001 - the connection's own error: it is closed either way
        pass

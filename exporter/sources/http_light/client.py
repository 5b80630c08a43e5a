"""A GET of many small bodies over raw sockets, one kept connection per caller, on the shared
boundary's deadlines, retries, size bounds and errors (exporter/sources/http.py).

httpx does far more per request than a scrape of a small text body needs (a request object,
its headers and cookies, a pool, h11's events). This client sends one fixed request head and
reads the answer with exporter/sources/http_light/wire.py; everything else is the boundary's:
`retried` gives each try its deadline and retries connect errors and 429/5xx (Retry-After
honoured within the deadline), `reply_text` judges the status and the text, the Inflater
bounds the body while inflating. A URL it does not send as written (credentials in it,
characters httpx would escape, dot segments) is left to httpx by the caller (`light_target`).
"""

from __future__ import annotations

import email.message
import functools
import re
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import unquote, urljoin, urlsplit

import httpx

from exporter.sources.http import (
    Bounds,
    Expired,
    Reply,
    refuse_declared,
    reply_text,
    retried,
)
from exporter.sources.http_light.connection import open_stream
from exporter.sources.http_light.wire import Head, ResponseReader, Stream
from exporter.sources.inflate import ACCEPT_ENCODING, Inflater

__all__ = ["Connection", "LightClient", "LightSettings", "Opener", "Target", "light_target"]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 20  # httpx's default
# What a request target may hold as written: RFC 3986's characters, escapes well formed.
_SAFE = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_BLANK_OR_CONTROL = re.compile(r"[\x00-\x20\x7f]")


class Connection(Stream, Protocol):
    """A stream that can also say whether it went stale while idle, and be closed."""

    def stale(self) -> bool:
        """Whether an idle connection has been closed by its peer (or has unasked bytes)."""

    def close(self) -> None:
        """Close it."""


_Wait = Callable[[], float | None]
# host, port, TLS context (None: plain TCP), the seconds each connect step may take.
Opener = Callable[[str, int, ssl.SSLContext | None, Callable[[], float | None]], Connection]


@dataclass(frozen=True)
class Target:
    """Where a GET goes and the start of its request head."""

    url: str
    scheme: str
    host: str
    port: int
    path: str  # percent-decoded, as errors name it (httpx's `URL.path`)
    request: bytes  # the request line and Host


def light_target(url: str) -> Target | None:
    """The GET of `url` as this client sends it, or None for a URL left to httpx."""
    if not url.isascii() or _BLANK_OR_CONTROL.search(url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme, netloc, host = parts.scheme, parts.netloc, parts.hostname
    prefix = f"{scheme}://{netloc}"
    if scheme not in _DEFAULT_PORTS or not host or "@" in netloc:
        return None  # credentials in the URL are httpx's basic auth: left to it
    if url[: len(prefix)].lower() != prefix.lower():
        return None
    rest = url[len(prefix) :].partition("#")[0]
    if rest[:1] not in ("", "/", "?"):
        return None
    rest = rest if rest.startswith("/") else "/" + rest
    path = rest.partition("?")[0]
    if not _SAFE.fullmatch(rest) or _BAD_ESCAPE.search(rest):
        return None
    if any(segment in (".", "..") for segment in path.split("/")):
        return None  # httpx would remove them
    default = _DEFAULT_PORTS[scheme]
    port = default if port is None else port
    named = f"[{host}]" if ":" in host else host
    authority = named if port == default else f"{named}:{port}"
    request = f"GET {rest} HTTP/1.1\r\nHost: {authority}\r\n".encode("ascii")
    return Target(url, scheme, host, port, unquote(path), request)


@dataclass
class LightSettings:
    """What every caller of one source shares: its call timeout, TLS, redirects, user agent."""

    timeout: float  # seconds a call may take (the source's `timeout`)
    verify: ssl.SSLContext | bool  # as httpx takes it
    follow_redirects: bool
    user_agent: str
    kept_for: float  # seconds an idle connection is kept
    _context: ssl.SSLContext | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def tls(self) -> ssl.SSLContext:
        """The TLS context, made on first use as httpx makes it (the system's CAs loaded once)."""
        with self._lock:
            if self._context is None:
                context = httpx.create_ssl_context(verify=self.verify)
                context.set_alpn_protocols(["http/1.1"])  # as httpcore asks, on the same context
                self._context = context
            return self._context

    def fixed_fields(self) -> bytes:
        """The request fields after Host, the same on every request."""
        return (
            f"Accept: */*\r\nAccept-Encoding: {ACCEPT_ENCODING}\r\nConnection: keep-alive\r\n"
            f"User-Agent: {self.user_agent}\r\n\r\n"
        ).encode("ascii")


class LightClient:
    """One caller's GETs (one thread at a time), keeping at most one idle connection."""

    def __init__(
        self,
        settings: LightSettings,
        targets: Mapping[str, Target] | None = None,
        opener: Opener = open_stream,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._targets = targets or {}
        self._open = opener
        self._monotonic = monotonic
        self._fields = settings.fixed_fields()
        self._idle: tuple[Target, Connection, float] | None = None

    def get_text(self, source: str, url: str) -> str:
        """GET `url` and return its body as text, exactly as http.get_text would."""
        target = self._targets.get(url) or light_target(url)
        if target is None:
            raise ValueError(f"{url!r} is not a URL the light client sends")

        def read(bounds: Bounds) -> Reply:
            return self._follow(target, bounds, source)

        return reply_text(source, retried(source, url, self._settings.timeout, read))

    def close(self) -> None:
        """Close the idle connection, if any."""
        idle, self._idle = self._idle, None
        if idle is not None:
            idle[1].close()

    def _follow(self, target: Target, bounds: Bounds, source: str) -> Reply:
        for _ in range(MAX_REDIRECTS + 1):
            reply = self._exchange(target, bounds, source)
            location = reply.headers.get("location")
            if not self._settings.follow_redirects or reply.status not in _REDIRECTS:
                return reply
            if location is None:
                return reply
            following = light_target(urljoin(target.url, location))
            if following is None:
                raise httpx.UnsupportedProtocol(
                    "a redirect to a URL that is not plain http or https (not followed)"
                )
            target = following
        raise httpx.TooManyRedirects("Exceeded maximum allowed redirects.")

    def _exchange(self, target: Target, bounds: Bounds, source: str) -> Reply:
        wait = _read_wait(bounds)
        conn, reused = self._connection(target, bounds)
        reader = ResponseReader(conn, wait)
        try:
            head = self._ask(conn, target, reader, wait)
        except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError):
            if not reused or reader.answered:
                raise
            # A kept connection the server closed as the request went out, nothing of the
            # answer read: the GET goes once more, on a new connection.
            conn = self._connect(target, bounds)
            reader = ResponseReader(conn, wait)
            head = self._ask(conn, target, reader, wait)
        try:
            reply = _body(target, head, reader, bounds, source)
        except BaseException:
            conn.close()
            raise
        if reader.reusable:
            self._idle = (target, conn, self._monotonic() + self._settings.kept_for)
        else:
            conn.close()
        return reply

    def _ask(self, conn: Connection, target: Target, reader: ResponseReader, wait: _Wait) -> Head:
        """Send the request and read the answer's head; the connection is closed on failure."""
        try:
            conn.send(target.request + self._fields, wait())
            return reader.head()
        except BaseException:
            conn.close()
            raise

    def _connection(self, target: Target, bounds: Bounds) -> tuple[Connection, bool]:
        idle, self._idle = self._idle, None
        if idle is not None:
            kept, conn, until = idle
            same = (kept.scheme, kept.host, kept.port) == (target.scheme, target.host, target.port)
            if same and self._monotonic() < until and not conn.stale():
                return conn, True
            conn.close()
        return self._connect(target, bounds), False

    def _connect(self, target: Target, bounds: Bounds) -> Connection:
        tls = self._settings.tls() if target.scheme == "https" else None

        def wait() -> float:
            if bounds.socket is None:
                return bounds.connect
            return min(bounds.connect, bounds.socket_left())

        return self._open(target.host, target.port, tls, wait)


def _read_wait(bounds: Bounds) -> _Wait:
    if bounds.socket is None:
        return lambda: None
    return bounds.socket_left


def _body(target: Target, head: Head, reader: ResponseReader, bounds: Bounds, source: str) -> Reply:
    """The body read whole, inflated within `max_body`, the deadline checked between chunks."""
    what = f"{source}: {target.path}"
    headers, limit = head.headers, bounds.max_body
    encoding = headers.get("content-encoding")
    refuse_declared(what, encoding, headers.get("content-length", ""), limit)
    inflater = Inflater(what, encoding, limit)
    content = bytearray()
    for chunk in reader.body(head):
        for piece in inflater.feed(chunk):
            content += piece
        if bounds.remaining() < 0:
            raise Expired
    inflater.finish()
    charset = charset_of(headers.get("content-type"))
    return Reply(head.status, target.path, head.reason, headers, content, charset)


@functools.lru_cache(maxsize=64)
def charset_of(content_type: str | None) -> str:
    """The charset a Content-Type names, read as httpx reads it; UTF-8 when none or unknown."""
    if content_type is None:
        return "utf-8"
    message = email.message.Message()
    message["content-type"] = content_type
    charset = message.get_content_charset(failobj=None) or "utf-8"
    try:
        "".encode(charset)
    except LookupError:
        return "utf-8"
    return charset

"""The one boundary where upstream HTTP becomes the exporter's data and errors.

Every call has an overall deadline (connect, headers and body together): the configured
`timeout`, cut to what is left of the refresh's deadline. Transient failures are retried within
that deadline. Bodies are read as they came: a known secret is redacted from the text an
error quotes (a status body, an excerpt), never from the data a source parses.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import ssl
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from exporter.errors import (
    UpstreamPayloadError,
    UpstreamStatusError,
    UpstreamTooLarge,
    UpstreamUnavailable,
)
from exporter.redact import redact
from exporter.sources.bounded import call_ends
from exporter.sources.clients import MAX_CONNECT
from exporter.sources.deadline import Deadline, current, retry_after
from exporter.sources.inflate import ACCEPT_ENCODING, Inflater, format_bytes

__all__ = [
    "TRANSIENT_STATUSES",
    "Bounds",
    "Expired",
    "Reply",
    "error_message",
    "get_bytes",
    "get_json",
    "get_text",
    "not_json",
    "refuse_declared",
    "reply_text",
    "retried",
    "upstream_errors",
]

# Rate limited, or a gateway in front of the upstream that could not reach it: worth a retry.
TRANSIENT_STATUSES = frozenset({429, 502, 503, 504})
_MAX_ERROR_TEXT = 200
_MAX_EXCERPT = 60
# A socket operation cut at the deadline may wake a hair before the clock reads it as passed.
_PAST_DEADLINE = 1e-3

log = logging.getLogger(__name__)


@contextmanager
def upstream_errors(source: str) -> Iterator[None]:
    """Translate httpx transport errors into UpstreamUnavailable, naming the source."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise UpstreamUnavailable(
            f"{source}: timed out ({type(exc).__name__})", timeout=True
        ) from None
    except httpx.TransportError as exc:
        raise UpstreamUnavailable(f"{source}: unreachable ({type(exc).__name__}: {exc})") from None
    except httpx.DecodingError as exc:  # a Content-Encoding httpx itself failed to undo
        raise UpstreamPayloadError(f"{source}: the body cannot be decoded ({exc})") from None


@dataclass(frozen=True)
class Reply:
    """A response read whole within its deadline."""

    status: int
    path: str
    reason_phrase: str
    headers: Mapping[str, str]  # read by lower-case name, repeated fields joined by ", "
    content: bytes | bytearray
    charset: str

    def text(self) -> str:
        """The body as text, as it came."""
        return self.content.decode(self.charset, errors="replace")


def error_message(text: str, fallback: str) -> str:
    """The human part of an error body: JSON `message`/`error.message`/`detail`, or plain text."""
    text = text.strip()
    try:
        body = json.loads(text.splitlines()[0]) if text else None
    except (json.JSONDecodeError, IndexError):
        body = None
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        detail = body.get("detail")
        if isinstance(error, dict):
            message = error.get("message")
        elif error is not None:
            message = error
        if message is None and detail is not None:
            message = detail.get("error", detail) if isinstance(detail, dict) else detail
        if message is None:
            message = body.get("message")
    if message is None:
        message = text.splitlines()[0] if text else fallback
    return redact(str(message))[:_MAX_ERROR_TEXT]


def _checked(source: str, reply: Reply) -> Reply:
    if reply.status != 200:
        raise UpstreamStatusError(
            f"{source}: HTTP {reply.status} from {reply.path}: "
            f"{error_message(reply.text(), reply.reason_phrase)}",
            reply.status,
        )
    return reply


def get_text(
    client: httpx.Client, source: str, path: str, params: Mapping[str, str] | None = None
) -> str:
    """GET a path and return the body as text; any status but 200, or a body that is not
    text in its charset (UTF-8 unless it says otherwise), is an error."""
    return reply_text(source, _get(client, source, path, params))


def reply_text(source: str, reply: Reply) -> str:
    """A reply's body as text in its charset; any status but 200, or bytes that are not that
    charset's text, is an error."""
    reply = _checked(source, reply)
    try:
        return reply.content.decode(reply.charset)
    except UnicodeDecodeError as exc:
        message = f"{source}: {reply.path} is not {reply.charset} text (byte {exc.start})"
        raise UpstreamPayloadError(message) from None


def get_json(
    client: httpx.Client, source: str, path: str, params: Mapping[str, str] | None = None
) -> Any:
    """GET a path and decode its JSON body; any status but 200, or a non-JSON body, is an error."""
    reply = _checked(source, _get(client, source, path, params))
    content = reply.content
    try:
        # JSON is UTF-8 (RFC 8259); decoding strictly keeps a corrupt body a payload error.
        return json.loads(content.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise not_json(source, reply.path, content) from None


def get_bytes(
    client: httpx.Client, source: str, path: str, params: Mapping[str, str] | None = None
) -> bytes | bytearray:
    """GET a path and return its body as read, for a decoder that reads bytes.

    The body is never turned into text: a typed decoder reads it in place, so a large reply
    is held once, not as bytes, text and objects at the same time.
    """
    return _checked(source, _get(client, source, path, params)).content


def not_json(source: str, path: str, content: bytes | bytearray) -> UpstreamPayloadError:
    """The error for a 200 whose body is not JSON, with a short redacted excerpt of it."""
    excerpt = " ".join(redact(bytes(content[:4096]).decode("utf-8", errors="replace")).split())
    if len(excerpt) > _MAX_EXCERPT:
        excerpt = excerpt[: _MAX_EXCERPT - 3] + "..."
    return UpstreamPayloadError(f"{source}: {path} did not return JSON: {excerpt!r}")


def _get(client: httpx.Client, source: str, path: str, params: Mapping[str, str] | None) -> Reply:
    def read(bounds: Bounds) -> Reply:
        return _read(client, path, params, bounds, source)

    return retried(source, path, client.timeout.read, read)


@dataclass(frozen=True)
class Bounds:
    """What one try of a call may spend: its sockets, its body's time and its body's size."""

    connect: float  # seconds a connect may take
    socket: float | None  # the call's seconds (None: unbounded, a bare client outside a refresh)
    socket_left: Callable[[], float]  # seconds left of it by the real clock, for each operation
    remaining: Callable[[], float]  # seconds left by the refresh's clock, checked between chunks
    max_body: float


def retried(
    source: str, path: str, per_call: float | None, read: Callable[[Bounds], Reply]
) -> Reply:
    """GET with retries of transient failures, each try (`read`) within its deadline: the
    call's `per_call` seconds, cut to what is left of the refresh's.

    Only GET is ever sent from here, and GET is idempotent: a retry cannot repeat an effect.
    """
    deadline = current()
    backoff = deadline.policy.backoff
    retry = 0
    with upstream_errors(source):
        while True:
            last = retry + 1 >= backoff.attempts
            try:
                reply = _attempt(source, path, per_call, read, deadline)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                # Nothing reached the upstream, so trying again cannot repeat any effect; a
                # certificate that failed to verify will fail the same way again.
                wait = backoff.delay(retry + 1)
                if last or wait >= deadline.remaining() or _tls_failure(exc):
                    raise
                what = type(exc).__name__
            else:
                if reply.status not in TRANSIENT_STATUSES:
                    return reply
                asked = retry_after(reply.headers, deadline.policy.clock) or 0.0
                wait = max(backoff.delay(retry + 1), asked)
                if last or wait >= deadline.remaining():
                    log.debug(
                        "%s: HTTP %d: no retry (the next would be in %.2fs)",
                        source,
                        reply.status,
                        wait,
                    )
                    deadline.asked_to_wait(asked)  # the next refresh waits for it instead
                    return reply
                what = f"HTTP {reply.status}"
            retry += 1
            log.debug(
                "%s: GET %s: %s, retry %d of %d in %.2fs",
                source,
                path,
                what,
                retry,
                backoff.attempts - 1,
                wait,
            )
            backoff.sleep(wait)


def _tls_failure(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _attempt(
    source: str,
    path: str,
    per_call: float | None,
    read: Callable[[Bounds], Reply],
    refresh: Deadline,
) -> Reply:
    """One GET, streamed, that ends when its deadline passes, in whatever phase it is.

    httpx's timeouts bound each socket operation, so an upstream that drips a byte at a time
    never trips them: every socket operation of the call gets at most what is left of its
    deadline (bounded), and the body is also checked against it after every chunk (for
    transports without a socket).
    """
    monotonic = refresh.policy.monotonic
    left = refresh.remaining()
    call_bound = per_call is not None and per_call < left
    seconds = per_call if per_call is not None and call_bound else left
    if seconds <= 0:
        raise UpstreamUnavailable(
            f"{source}: refresh deadline of {refresh.seconds:g}s passed before GET {path}",
            timeout=True,
        )
    if call_bound:
        which = f"call deadline of {seconds:g}s"
    else:
        which = f"refresh deadline of {refresh.seconds:g}s"
    ends = monotonic() + seconds
    # No per-call timeout and no refresh deadline (a bare client outside a refresh): unbounded.
    bound = None if math.isinf(seconds) else seconds

    def remaining() -> float:
        return ends - monotonic()

    # Sockets wait in real time, so they are bounded by the real clock; the body between
    # chunks by the refresh's own (a test's stopwatch, a transport without sockets).
    on_sockets = math.inf if bound is None else time.monotonic() + bound

    def socket_time() -> float:
        return on_sockets - time.monotonic()

    bounds = Bounds(min(seconds, MAX_CONNECT), bound, socket_time, remaining, refresh.max_body)
    try:
        with call_ends(socket_time) if bound is not None else contextlib.nullcontext():
            return read(bounds)
    except Expired:
        pass
    except httpx.TransportError:
        if socket_time() > _PAST_DEADLINE:
            raise
    raise UpstreamUnavailable(f"{source}: GET {path} passed its {which}", timeout=True)


class Expired(Exception):
    """The deadline passed between two chunks of the body."""


def _read(
    client: httpx.Client,
    path: str,
    params: Mapping[str, str] | None,
    bounds: Bounds,
    source: str,
) -> Reply:
    limit, remaining = bounds.max_body, bounds.remaining
    timeout = httpx.Timeout(bounds.socket, connect=bounds.connect)
    # Only the codings the exporter inflates itself, a bounded step at a time.
    headers = {"Accept-Encoding": ACCEPT_ENCODING}
    with client.stream("GET", path, params=params, headers=headers, timeout=timeout) as response:
        what = f"{source}: {response.request.url.path}"
        encoding = response.headers.get("content-encoding")
        refuse_declared(what, encoding, response.headers.get("content-length", ""), limit)
        chunks: Iterable[bytes]
        if response.is_stream_consumed:  # built in memory (a mock transport): decoded already
            chunks, inflater = [response.content], Inflater(what, None, limit)
        else:
            chunks, inflater = response.iter_raw(), Inflater(what, encoding, limit)
        # One growing buffer, not a list of chunks joined at the end: the body is held once.
        content = bytearray()
        for chunk in chunks:
            for piece in inflater.feed(chunk):
                content += piece
            if remaining() < 0:
                raise Expired
        inflater.finish()
        return Reply(
            response.status_code,
            response.request.url.path,
            response.reason_phrase,
            response.headers,
            content,
            _charset(response),
        )


def refuse_declared(what: str, encoding: str | None, declared: str, limit: float) -> None:
    """An identity body whose Content-Length is over `limit` is refused before it is read."""
    if not encoding and declared.isdigit() and int(declared) > limit:
        raise UpstreamTooLarge(
            f"{what}: Content-Length {declared} is over max_response_size "
            f"({format_bytes(limit)}); not read"
        )


def _charset(response: httpx.Response) -> str:
    charset = response.charset_encoding or "utf-8"
    try:
        "".encode(charset)
    except LookupError:
        return "utf-8"
    return charset

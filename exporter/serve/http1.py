"""HTTP/1.x on the wire: a request read with h11 (head and bounded body), and a response head.

h11 does the parsing (request line, header syntax, Content-Length and chunked framing, NULs,
duplicated or conflicting Content-Length, obs-fold unfolded as RFC 9112 section 5.2 allows);
this module only bounds what h11 is fed and turns its verdicts into the status to answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from http import HTTPStatus

import h11

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_HEAD_BYTES",
    "BadRequest",
    "Request",
    "RequestReader",
    "Response",
    "parse_head",
    "response_head",
]

# A scrape's head is a few hundred bytes; browsers with cookies stay well under this.
MAX_HEAD_BYTES = 16 * 1024
# Nothing we serve takes a body: one is read (so closing does not reset the answer) up to this.
MAX_BODY_BYTES = 16 * 1024
_MAX_HEADERS = 100
# h11 is fed at most this much at a time, so its buffer never holds much past MAX_HEAD_BYTES
# before it is judged, however large the caller's reads.
_SLICE = 4096
_VERSIONS = (b"1.0", b"1.1")
_TOO_LARGE = 413  # Content Too Large (RFC 9110); HTTPStatus names it differently by version


class BadRequest(ValueError):
    """A request that is not HTTP/1.x or is too large: answered with `status` and closed."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Request:
    """A request line and its headers (names in lower case; repeated ones joined by commas)."""

    method: str
    target: str
    headers: Mapping[str, str]

    @property
    def path(self) -> str:
        """The target without its query."""
        return self.target.split("?", 1)[0]

    def header(self, name: str) -> str | None:
        """A header's value, or None."""
        return self.headers.get(name.lower())


@dataclass(frozen=True)
class Response:
    """What to send: a status, a body and its headers (Content-Length is added)."""

    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)


class RequestReader:
    """One request on one connection: fed the bytes as they arrive, says when it is whole.

    No socket here: the server feeds what it reads, within its deadline for the whole request.
    The head is bounded (431 past MAX_HEAD_BYTES or 100 headers), the body too (413 past
    MAX_BODY_BYTES, whatever its framing); what follows the request (a pipelined one) is left
    unread, since every connection closes after one answer.
    """

    def __init__(self, max_head: int = MAX_HEAD_BYTES, max_body: int = MAX_BODY_BYTES) -> None:
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=max_head)
        self._max_head = max_head
        self._max_body = max_body
        self._fed = 0
        self._body = 0
        self._request: Request | None = None

    @property
    def started(self) -> bool:
        """Whether any byte has arrived."""
        return self._fed > 0

    def feed(self, data: bytes) -> Request | None:
        """Take bytes read (b"" at end of stream): the request once whole, None while more is
        needed, or BadRequest with the status to answer."""
        try:
            if not data:
                self._h11.receive_data(b"")
                return self._events()
            for start in range(0, len(data), _SLICE):
                piece = data[start : start + _SLICE]
                self._fed += len(piece)
                self._h11.receive_data(piece)
                request = self._events()
                if request is not None:
                    return request
            return None
        except h11.RemoteProtocolError as exc:
            raise BadRequest(str(exc), exc.error_status_hint) from None

    def _events(self) -> Request | None:
        while True:
            event = self._h11.next_event()
            if event is h11.NEED_DATA:
                return None
            if isinstance(event, h11.Request):
                self._request = self._head(event)
            elif isinstance(event, h11.Data):
                self._body += len(event.data)
                if self._body > self._max_body:
                    raise BadRequest("request body too large", _TOO_LARGE)
            elif isinstance(event, h11.EndOfMessage) and self._request is not None:
                return self._request
            else:  # ConnectionClosed (or PAUSED, which needs a request first)
                raise BadRequest("the connection closed before a whole request")

    def _head(self, event: h11.Request) -> Request:
        # Whatever h11 has not processed yet follows the head: body or pipelined requests.
        if self._fed - len(self._h11.trailing_data[0]) > self._max_head:
            raise BadRequest("request head too large", HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
        if len(event.headers) > _MAX_HEADERS:
            raise BadRequest("too many headers", HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
        if event.http_version not in _VERSIONS:
            raise BadRequest("only HTTP/1.0 and HTTP/1.1", HTTPStatus.HTTP_VERSION_NOT_SUPPORTED)
        names = {name for name, _ in event.headers}
        if {b"content-length", b"transfer-encoding"} <= names:
            # RFC 9112 section 6.3 lets a server refuse both: the sign of a smuggling attempt.
            raise BadRequest("both Content-Length and Transfer-Encoding")
        length = _content_length(event)
        if length is not None and length > self._max_body:
            raise BadRequest("request body too large", _TOO_LARGE)
        headers: dict[str, str] = {}
        for name, value in event.headers:
            key, text = name.decode("ascii"), value.decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        return Request(event.method.decode("ascii"), event.target.decode("latin-1"), headers)


def _content_length(event: h11.Request) -> int | None:
    """The declared body length (h11 has checked it is one decimal number)."""
    for name, value in event.headers:
        if name == b"content-length":
            return int(value)
    return None


def parse_head(head: bytes) -> Request:
    """Parse a request whose bytes have all arrived, or raise BadRequest."""
    reader = RequestReader()
    request = reader.feed(head)
    if request is None:
        request = reader.feed(b"")
    if request is None:
        raise BadRequest("the request is not whole")
    return request


def response_head(response: Response, server: str, now: datetime) -> bytes:
    """The status line and headers of `response`; every connection closes after one answer."""
    try:
        phrase = HTTPStatus(response.status).phrase
    except ValueError:
        phrase = ""
    lines = [
        f"HTTP/1.1 {response.status} {phrase}",
        f"Server: {server}",
        f"Date: {format_datetime(now.astimezone(UTC), usegmt=True)}",
        f"Content-Type: {response.content_type}",
        f"Content-Length: {len(response.body)}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in response.headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

"""HTTP/1.x on the wire: a request head parsed whole, and a response head to send before a body."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from http import HTTPStatus

__all__ = ["MAX_HEAD_BYTES", "BadRequest", "Request", "Response", "parse_head", "response_head"]

# A scrape's head is a few hundred bytes; browsers with cookies stay well under this.
MAX_HEAD_BYTES = 16 * 1024
_MAX_HEADERS = 100
_TOKEN = re.compile(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_VERSION = re.compile(rb"^HTTP/1\.[01]$")


class BadRequest(ValueError):
    """A head that is not HTTP/1.x: answered with `status` and closed."""

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


def parse_head(head: bytes) -> Request:
    """Parse a request head up to and including its empty line, or raise BadRequest."""
    lines = head.split(b"\r\n")
    if lines[-2:] != [b"", b""]:
        raise BadRequest("the head does not end with an empty line")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not _TOKEN.match(parts[0]) or not parts[1]:
        raise BadRequest("malformed request line")
    if not _VERSION.match(parts[2]):
        raise BadRequest("only HTTP/1.0 and HTTP/1.1", HTTPStatus.HTTP_VERSION_NOT_SUPPORTED)
    fields = lines[1:-2]
    if len(fields) > _MAX_HEADERS:
        raise BadRequest("too many headers", HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
    headers: dict[str, str] = {}
    for line in fields:
        name, colon, value = line.partition(b":")
        # No obsolete line folding, no space before the colon (RFC 9112 section 5).
        if not colon or not _TOKEN.match(name):
            raise BadRequest("malformed header line")
        key = name.decode("ascii").lower()
        text = value.strip(b" \t").decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return Request(parts[0].decode("ascii"), parts[1].decode("latin-1"), headers)


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

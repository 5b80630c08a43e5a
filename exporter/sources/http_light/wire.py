"""An HTTP/1.1 response read off a byte stream: its head, then its body as it is framed.

The rules are RFC 9112's for a client that only sends GET: informational (1xx) heads are
skipped; 204 and 304 have no body; `Transfer-Encoding` overrides `Content-Length` and must end
in `chunked` (the only transfer coding read); repeated `Content-Length` values must agree; with
neither, the body runs to the end of the stream. A head is at most 100 KiB (httpcore's bound on
what h11 may buffer), each line is checked (a field name is a token, a value holds no control
character), an obsolete line fold is read as one space, and a bare LF ends a line as CRLF does.
A chunk's data must end with CRLF. What breaks a rule is a protocol error; a connection is only
kept after a body read to its framed end, on HTTP/1.1 without `Connection: close`, and with
nothing after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import httpx

__all__ = ["MAX_HEAD", "Head", "ResponseReader", "Stream"]

MAX_HEAD = 100 * 1024
# What a connection that sent nothing of an answer raises, in httpcore's words.
DISCONNECTED = "Server disconnected without sending a response."
_STATUS = re.compile(rb"HTTP/1\.([01]) ([1-9][0-9][0-9])(?: ([^\x00-\x08\x0a-\x1f\x7f]*))?")
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
# The chunk size, then extensions (`;name=value`, kept loose: they are ignored).
_CHUNK = re.compile(rb"([0-9A-Fa-f]{1,16})[\t ]*(?:;[^\x00-\x08\x0a-\x1f\x7f]*)?")
_NO_BODY = frozenset({204, 304})
_BLANKS = b" \t"


class Stream(Protocol):
    """A connection's bytes: what the reader needs of a socket (or of a test's script)."""

    def send(self, data: bytes, timeout: float | None) -> None:
        """Send all of `data` within `timeout` seconds (httpx's write errors otherwise)."""

    def recv(self, timeout: float | None) -> bytes:
        """The next bytes, b"" at the end of the stream (httpx's read errors otherwise)."""


@dataclass(frozen=True)
class Head:
    """A response's status line and fields (names in lower case, repeats joined by ", ")."""

    minor: int  # HTTP/1.<minor>
    status: int
    reason: str
    headers: dict[str, str]


def _protocol(message: str) -> httpx.RemoteProtocolError:
    return httpx.RemoteProtocolError(message)


class ResponseReader:
    """One response off `stream`, each read given `wait()` seconds at most."""

    def __init__(self, stream: Stream, wait: Callable[[], float | None]) -> None:
        self._stream = stream
        self._wait = wait
        self._buf = bytearray()
        self.answered = False  # a byte of the answer came: a retry could repeat nothing unseen
        self.reusable = False  # set once the body is read to its framed end

    def _fill(self) -> bool:
        data = self._stream.recv(self._wait())
        if data:
            self.answered = True
            self._buf += data
        return bool(data)

    def head(self) -> Head:
        """The final response's head (1xx heads are read and skipped)."""
        while True:
            head = _parse_head(self._head_bytes())
            if head.status >= 200:
                return head
            if head.status == 101:
                raise _protocol("the server switched protocols (101) on a GET that asked for none")

    def _head_bytes(self) -> bytes:
        scanned = 0
        while True:
            end = _head_end(self._buf, scanned)
            if end >= 0:
                head = bytes(self._buf[:end])
                del self._buf[:end]
                return head
            scanned = max(len(self._buf) - 3, 0)
            if len(self._buf) > MAX_HEAD:
                raise _protocol(f"the response head is larger than {MAX_HEAD // 1024} KiB")
            if not self._fill():
                if not self.answered:
                    raise _protocol(DISCONNECTED)
                raise _protocol("the server closed the connection inside the response head")

    def body(self, head: Head) -> Iterator[bytes]:
        """The body's bytes as they come, framed as `head` says (transfer coding undone)."""
        connection = {t.strip().lower() for t in head.headers.get("connection", "").split(",")}
        keep = head.minor == 1 and "close" not in connection
        if head.status in _NO_BODY:
            self.reusable = keep and not self._buf
            return
        coding = head.headers.get("transfer-encoding")
        if coding is not None:
            codings = [c.strip().lower() for c in coding.split(",")]
            if codings != ["chunked"]:
                raise _protocol(f"unsupported Transfer-Encoding {coding[:40]!r}")
            yield from self._chunked()
            # Both framings at once is how requests are smuggled: never reuse such a connection.
            keep = keep and "content-length" not in head.headers
        elif "content-length" in head.headers:
            yield from self._sized(_length(head.headers["content-length"]))
        else:
            yield from self._to_close()
            keep = False
        self.reusable = keep and not self._buf

    def _sized(self, length: int) -> Iterator[bytes]:
        got = 0
        while True:
            if self._buf:
                take = min(length - got, len(self._buf))
                piece = bytes(self._buf[:take])
                del self._buf[:take]
                got += take
                if piece:
                    yield piece
            if got == length:
                return
            if not self._fill():
                raise _protocol(
                    "peer closed connection without sending complete message body: "
                    f"received {got} bytes, expected {length}"
                )

    def _to_close(self) -> Iterator[bytes]:
        while True:
            if self._buf:
                piece = bytes(self._buf)
                self._buf.clear()
                yield piece
            if not self._fill():
                return

    def _chunked(self) -> Iterator[bytes]:
        while True:
            line = self._line()
            size_line = _CHUNK.fullmatch(line)
            if size_line is None:
                raise _protocol("a chunk's size line is malformed")
            size = int(size_line[1], 16)
            if size == 0:
                self._trailers()
                return
            yield from self._sized(size)
            while len(self._buf) < 2:
                if not self._fill():
                    raise _protocol("incomplete chunked read")
            if self._buf[:2] != b"\r\n":
                raise _protocol("a chunk's data does not end with CRLF")
            del self._buf[:2]

    def _trailers(self) -> None:
        size = 0
        while line := self._line():
            size += len(line)
            if size > MAX_HEAD:
                raise _protocol(f"the trailer fields are larger than {MAX_HEAD // 1024} KiB")
            if line[:1] not in (b" ", b"\t"):
                _field(line)  # checked as a field; a trailer changes nothing read here

    def _line(self) -> bytes:
        scanned = 0
        while True:
            end = self._buf.find(b"\n", scanned)
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                return line[:-1] if line.endswith(b"\r") else line
            scanned = len(self._buf)
            if scanned > MAX_HEAD:
                raise _protocol(f"a chunked body's line is longer than {MAX_HEAD // 1024} KiB")
            if not self._fill():
                raise _protocol("incomplete chunked read")


def _head_end(buf: bytearray, start: int) -> int:
    """Where the head ends (after its empty line), or -1; a bare LF ends a line too."""
    at = buf.find(b"\n", start)
    while at >= 0:
        if buf[at + 1 : at + 2] == b"\n":
            return at + 2
        if buf[at + 1 : at + 3] == b"\r\n":
            return at + 3
        at = buf.find(b"\n", at + 1)
    return -1


def _parse_head(raw: bytes) -> Head:
    lines = raw.split(b"\n")
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines[:-2]]
    status = _STATUS.fullmatch(lines[0]) if lines else None
    if status is None:
        raise _protocol("the status line is not HTTP/1.0 or HTTP/1.1")
    headers: dict[str, str] = {}
    last = ""
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):  # an obsolete line fold: the value goes on, one space
            if not last or _CONTROL.search(line):
                raise _protocol("a header line folds onto nothing, or holds a control character")
            folded = line.strip(_BLANKS).decode("latin-1")
            headers[last] = f"{headers[last]} {folded}".strip()
            continue
        name, value = _field(line)
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
        last = name
    reason = (status[3] or b"").decode("ascii", errors="ignore")
    return Head(int(status[1]), int(status[2]), reason, headers)


def _field(line: bytes) -> tuple[str, str]:
    name, colon, value = line.partition(b":")
    if not colon or _TOKEN.fullmatch(name) is None:
        raise _protocol("a header line is not `name: value` with a token for its name")
    if _CONTROL.search(value):
        raise _protocol("a header value holds a control character")
    return name.decode("ascii").lower(), value.strip(_BLANKS).decode("latin-1")


def _length(value: str) -> int:
    values = {v.strip() for v in value.split(",")}
    if len(values) != 1:
        raise _protocol("conflicting Content-Length values")
    (length,) = values
    if not length.isdigit() or not length.isascii() or len(length) > 19:
        raise _protocol(f"an invalid Content-Length {length[:40]!r}")
    return int(length)

"""A loopback reverse proxy in front of a fake upstream that injects one fault at a time.

Faults, by name (`FaultProxy.fault`):

- ``""``: pass everything through;
- ``refused``: nothing listens on the port (the server is closed, then reopened on recovery);
- ``reset``: the connection is closed before any answer;
- ``slow``: the answer waits `delay` seconds before its headers;
- ``drip``: the headers come at once, then the body one byte every `delay` seconds;
- ``500``, ``502``, ``401``, ``403``: that status with a short body;
- ``429``: Too Many Requests with `Retry-After: <retry_after>`, `limit` times, then pass;
- ``truncated``: the promised Content-Length, half the body, then the connection closes;
- ``cut``: the body cut at the line boundary nearest its middle, sent whole with its own
  Content-Length: a truncated read that still parses (a one-line JSON body becomes empty);
- ``types``: every JSON number becomes a one-item list (DCGM text: every value becomes ``x``);
- ``nonfinite``: every JSON number and every DCGM value becomes NaN;
- ``empty``: every list in a JSON body becomes empty (DCGM text: only its comments stay);
- ``bloat``: the same JSON followed by 49 times its size in whitespace (still valid);
- ``nested``: the body inside 100,000 nested JSON objects (deeper than any decoder recurses);
- ``not_utf8``: the first quoted key (or DCGM metric name) gets a byte that is not UTF-8;
- ``overlap``: paged requests (`page=N`) get page N-1 for N > 1, as offset paging does when an
  entity is created between two requests;
- ``short``: paged requests for N > 1 get an empty page while the totals stay as they were;
- ``edit``: every answer's body goes through `editor(path, body)`, which returns the body to send
  (a hostile or broken upstream that still speaks the API: a field rewritten, a record added),
  or raises `Status` to answer that path with a status of its own (an endpoint gone: 404).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["FAULTS", "FaultProxy", "Status"]

FAULTS = (
    "refused",
    "reset",
    "slow",
    "drip",
    "500",
    "502",
    "401",
    "403",
    "429",
    "truncated",
    "cut",
    "types",
    "nonfinite",
    "empty",
    "bloat",
    "nested",
    "not_utf8",
    "overlap",
    "short",
    "edit",
)


class Status(Exception):
    """Raised by an editor: answer this request with `code` and a short body instead."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class _Answer:
    status: int
    headers: dict[str, str]
    body: bytes


class FaultProxy:
    """Forwards to `upstream` (a base URL) and spoils the answers as `fault` says."""

    def __init__(self, upstream: str, delay: float = 0.5, retry_after: int = 1) -> None:
        self.upstream = upstream.rstrip("/")
        self.fault = ""
        self.delay = delay
        self.retry_after = retry_after
        self.limit = 1_000_000  # how many 429s before requests pass again
        self.editor: Callable[[str, bytes], bytes] = lambda path, body: body
        self.requests = 0
        self._lock = threading.Lock()
        self._httpd = self._bind(0)
        self.port = int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to point a source at."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FaultProxy:
        """Serve in a daemon thread."""
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def set(self, fault: str) -> None:
        """Switch to a fault ("" heals); `refused` closes the port, healing reopens it."""
        if fault not in ("", *FAULTS):
            raise ValueError(f"unknown fault {fault!r}")
        was, self.fault = self.fault, fault
        if fault == "refused" and was != "refused":
            self.stop()
        elif was == "refused" and fault != "refused":
            self._httpd = self._bind(self.port)
            self.start()

    def _bind(self, port: int) -> ThreadingHTTPServer:
        httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        httpd.daemon_threads = True
        return httpd

    def _forward(self, method: str, path: str, headers: dict[str, str]) -> _Answer:
        url = self.upstream + _paged(path, self.fault)
        request = urllib.request.Request(url, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as resp:
                return _Answer(resp.status, dict(resp.headers.items()), resp.read())
        except urllib.error.HTTPError as err:
            return _Answer(err.code, dict(err.headers.items()), err.read())

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with proxy._lock:
                    proxy.requests += 1
                    fault = proxy.fault
                    if fault == "429":
                        proxy.limit -= 1
                        if proxy.limit < 0:
                            fault = ""
                if fault == "reset":
                    self.close_connection = True
                    return
                if fault == "slow":
                    time.sleep(proxy.delay)
                if fault in ("500", "502", "401", "403", "429"):
                    self._status(int(fault))
                    return
                wanted = {"Authorization", "Accept"}
                headers = {k: v for k, v in self.headers.items() if k in wanted}
                answer = proxy._forward("GET", self.path, headers)
                if fault == "edit":
                    try:
                        body = proxy.editor(self.path, answer.body)
                    except Status as status:
                        self._status(status.code)
                        return
                else:
                    body = _spoil(answer.body, fault, answer.headers)
                self._send(answer, body, fault)

            def _status(self, code: int) -> None:
                body = f'{{"error": "injected {code}"}}'.encode()
                self.send_response(code)
                if code == 429:
                    self.send_header("Retry-After", str(proxy.retry_after))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _send(self, answer: _Answer, body: bytes, fault: str) -> None:
                self.send_response(answer.status)
                kind = answer.headers.get("Content-Type", "application/octet-stream")
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    if fault == "truncated":
                        self.wfile.write(body[: len(body) // 2])
                        self.wfile.flush()
                        self.close_connection = True
                    elif fault == "drip":
                        for i in range(len(body)):
                            self.wfile.write(body[i : i + 1])
                            self.wfile.flush()
                            time.sleep(proxy.delay)
                    else:
                        self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def _paged(path: str, fault: str) -> str:
    if fault not in ("overlap", "short"):
        return path
    parts = urlsplit(path)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    page = int(query.get("page", "1") or "1")
    if page <= 1:
        return path
    query["page"] = str(page - 1) if fault == "overlap" else "999999"
    return urlunsplit(parts._replace(query=urlencode(query)))


def _spoil(body: bytes, fault: str, headers: dict[str, str]) -> bytes:
    if fault == "cut":
        return _cut(body)
    if fault == "nested":
        return b'{"a":' * 100_000 + body + b"}" * 100_000
    if fault == "not_utf8":
        at = body.find(b'":') if b'":' in body else body.find(b"{")
        return body[:at] + b"\xe9" + body[at:] if at > 0 else b"\xe9" + body
    if fault not in ("types", "nonfinite", "empty", "bloat"):
        return body
    if "json" not in headers.get("Content-Type", ""):
        return _spoil_text(body.decode(), fault).encode()
    doc = json.loads(body)
    if fault == "bloat":
        return body + b" " * (len(body) * 49)
    return json.dumps(_spoil_json(doc, fault)).encode()


def _spoil_json(value: Any, fault: str) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return [value] if fault == "types" else (float("nan") if fault == "nonfinite" else value)
    if isinstance(value, list):
        return [] if fault == "empty" else [_spoil_json(v, fault) for v in value]
    if isinstance(value, dict):
        return {k: _spoil_json(v, fault) for k, v in value.items()}
    return value


def _spoil_text(text: str, fault: str) -> str:
    if fault == "empty":
        return "\n".join(line for line in text.splitlines() if line.startswith("#")) + "\n"
    if fault == "bloat":
        return text + "\n" * (len(text) * 49)
    replacement = "x" if fault == "types" else "NaN"
    lines = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            line = line.rsplit(" ", 1)[0] + " " + replacement  # the value is the last field
        lines.append(line)
    return "\n".join(lines) + "\n"


def _cut(body: bytes) -> bytes:
    """The lines that end before the body's middle: what a writer stopped halfway had sent."""
    at = body.rfind(b"\n", 0, len(body) // 2)
    return body[: at + 1] if at >= 0 else b""

"""A tiny loopback HTTP server the demo's fake upstreams share: routing stays in each fake."""

from __future__ import annotations

import contextlib
import json
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "FakeRequest",
    "FakeResponse",
    "FakeServer",
    "json_response",
    "text_response",
]


@dataclass(frozen=True)
class FakeRequest:
    """What a fake needs of a request: method, path, decoded query and headers."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]

    def arg(self, name: str, default: str | None = None) -> str | None:
        """The first value of a query parameter, or the default."""
        values = self.query.get(name)
        return values[0] if values else default


@dataclass(frozen=True)
class FakeResponse:
    """A status, a body and its headers."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


def json_response(status: int, payload: Any, *, trailing_newline: bool = True) -> FakeResponse:
    """A JSON body as Go's encoder writes it (with the trailing newline)."""
    body = json.dumps(payload, separators=(",", ":")) + ("\n" if trailing_newline else "")
    return FakeResponse(status, body.encode(), {"Content-Type": "application/json"})


def text_response(
    status: int, text: str, content_type: str = "text/plain; charset=utf-8"
) -> FakeResponse:
    """A plain-text body."""
    return FakeResponse(status, text.encode(), {"Content-Type": content_type})


Handler = Callable[[FakeRequest], FakeResponse]


class FakeServer:
    """Serves one handler on 127.0.0.1 in a daemon thread; port 0 picks a free port."""

    def __init__(
        self,
        handler: Handler,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        keep_alive: bool = False,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """`keep_alive`: HTTP/1.1 with persistent connections, as real upstreams answer (the
        default answers each request on a connection of its own, then closes it); `tls`: serve
        HTTPS with this server context."""
        self._handler = handler
        self._keep_alive = keep_alive
        self._httpd = ThreadingHTTPServer((host, port), self._request_class())
        self._scheme = "http" if tls is None else "https"
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self._httpd.daemon_threads = True
        # A short poll interval: stopping a fake should not cost half a second per server.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL of the server, without a trailing slash."""
        host, port = self._httpd.server_address[:2]
        return f"{self._scheme}://{host!s}:{port}"

    def start(self) -> FakeServer:
        """Start serving in the background; returns self for chaining."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def _request_class(self) -> type[BaseHTTPRequestHandler]:
        handler = self._handler
        protocol = "HTTP/1.1" if self._keep_alive else "HTTP/1.0"

        class _Request(BaseHTTPRequestHandler):
            protocol_version = protocol
            # The head and the body go out in two writes: with Nagle's algorithm on, a kept-alive
            # client's next request waits ~40 ms for a delayed ACK. Go's net/http (every real
            # upstream here) sets TCP_NODELAY too.
            disable_nagle_algorithm = True

            def handle(self) -> None:
                # A kept connection the client drops between requests is its business.
                with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                    super().handle()

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def _answer(self, method: str) -> None:
                parts = urlsplit(self.path)
                request = FakeRequest(
                    method,
                    parts.path,
                    parse_qs(parts.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()},
                )
                response = handler(request)
                self.send_response(response.status)
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(response.body)))
                self.end_headers()
                # A client that timed out has hung up; that is its business, not an error here.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(response.body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the fakes are quiet; tests assert on responses, not on logs

        return _Request

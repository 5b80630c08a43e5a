"""HTTP serving: cached exposition bytes on the telemetry path, health, and a landing page."""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client.exposition import choose_encoder

from exporter import __version__
from exporter.exposition.render import Exposition
from exporter.serve.pages import Page

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_CONNECTIONS",
    "MetricsServer",
    "gzip_accepted",
    "parse_listen_address",
]

log = logging.getLogger(__name__)

DEFAULT_IDLE_TIMEOUT = 30.0
# Prometheus servers and a person with curl: a handful at once. More wait in the accept queue.
DEFAULT_MAX_CONNECTIONS = 16

LANDING = """<!DOCTYPE html>
<html><head><title>GPU chargeback exporter</title></head>
<body><h1>GPU chargeback exporter</h1>
<p>Version {version}. Per-team GPU and LLM chargeback from OpenCost, DCGM, Kueue and LiteLLM.</p>
<ul><li><a href="{path}">{path}</a>: metrics</li>{pages}
<li><a href="/healthz">/healthz</a>: health</li></ul>
</body></html>
"""


def parse_listen_address(value: str) -> tuple[str, int]:
    """Split `host:port` (`:port` means every interface, `[::1]:port` for IPv6)."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"listen address must be host:port, got {value!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


class MetricsServer:
    """Serves whatever `exposition()` returns; it never computes and never calls an upstream.

    Args:
        tls: when given, every connection is TLS with this context (handshake in the worker).
        authorize: when given, gets each request's `Authorization` header; False answers 401.
        idle_timeout: seconds a connection may stay silent (handshake, request line, headers).
        max_connections: connections served at once; the next ones wait to be accepted.
        pages: published beside the metrics, each at its path with what `rendered(name)`
            returns (bytes the worker rendered), or 503 while that is None (no join yet).
    """

    def __init__(
        self,
        address: tuple[str, int],
        telemetry_path: str,
        exposition: Callable[[], Exposition],
        *,
        tls: ssl.SSLContext | None = None,
        authorize: Callable[[str | None], bool] | None = None,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        pages: Sequence[Page] = (),
        rendered: Callable[[str], bytes | None] = lambda name: None,
    ) -> None:
        handler = _handler_class(telemetry_path, exposition, authorize, pages, rendered)
        self._httpd = _BoundedServer(address, handler, tls, idle_timeout, max_connections)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The port actually bound (useful when asked for port 0)."""
        return int(self._httpd.server_address[1])

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread.start()

    def serve_forever(self) -> None:
        """Serve in the calling thread until shut down."""
        self._httpd.serve_forever()

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._httpd.closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()


class _BoundedServer(ThreadingHTTPServer):
    """One thread per connection, but never more than `max_connections` of them at once."""

    daemon_threads = True
    # Connections beyond the bound wait in the kernel's accept queue, not in a thread of ours.
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        tls: ssl.SSLContext | None,
        idle_timeout: float,
        max_connections: int,
    ) -> None:
        self._tls = tls
        self._idle_timeout = idle_timeout
        self._slots = threading.BoundedSemaphore(max_connections)
        self.closing = threading.Event()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Runs in the accepting thread: waiting here stops accepting until a slot frees up,
        # with a bounded wait so that shutdown() is never stuck behind a busy server.
        while not self._slots.acquire(timeout=0.2):
            if self.closing.is_set():
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def finish_request(self, request: Any, client_address: Any) -> None:
        # Every blocking read and write below, the TLS handshake included, gives up after
        # `idle_timeout`: a client that connects and sends nothing frees its thread.
        request.settimeout(self._idle_timeout)
        if self._tls is None:
            super().finish_request(request, client_address)
            return
        try:
            conn = self._tls.wrap_socket(request, server_side=True)
        except OSError as exc:
            log.debug("TLS handshake with %s failed: %s", client_address[0], exc)
            return
        with conn:
            super().finish_request(conn, client_address)


def gzip_accepted(accept_encoding: str | None) -> bool:
    """Whether `Accept-Encoding` accepts gzip (q > 0) at least as much as identity (RFC 9110)."""
    weights: dict[str, float] = {}
    for element in (accept_encoding or "").split(","):
        coding, *params = (part.strip() for part in element.split(";"))
        coding = coding.lower()
        if not coding:
            continue
        weight = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = -1.0
        if 0.0 <= weight <= 1.0:
            weights[coding] = weight
    star = weights.get("*", 0.0)
    gzip_weight = weights.get("gzip", weights.get("x-gzip", star))
    # Identity is acceptable unless excluded but has no weight of its own: it only wins over
    # gzip when the client weighs it (or `*`) higher.
    identity_weight = weights.get("identity", star)
    return gzip_weight > 0 and gzip_weight >= identity_weight


def _handler_class(
    telemetry_path: str,
    exposition: Callable[[], Exposition],
    authorize: Callable[[str | None], bool] | None,
    pages: Sequence[Page],
    rendered: Callable[[str], bytes | None],
) -> type[BaseHTTPRequestHandler]:
    links = "".join(f'\n<li><a href="{p.path}">{p.path}</a>: {p.description}</li>' for p in pages)
    landing = LANDING.format(version=__version__, path=telemetry_path, pages=links).encode()
    by_path = {page.path: page for page in pages}

    class Handler(BaseHTTPRequestHandler):
        server_version = f"gpu-chargeback-exporter/{__version__}"

        def do_GET(self) -> None:
            if authorize is not None and not authorize(self.headers.get("Authorization")):
                challenge = {"WWW-Authenticate": "Basic"}
                self._send(401, b"Unauthorized\n", "text/plain; charset=utf-8", challenge)
                return
            path = self.path.split("?", 1)[0]
            if path == telemetry_path:
                self._metrics()
            elif path == "/healthz":
                self._send(200, b"ok\n", "text/plain; charset=utf-8")
            elif path == "/":
                self._send(200, landing, "text/html; charset=utf-8")
            elif path in by_path:
                self._page(by_path[path])
            else:
                self._send(404, b"404 page not found\n", "text/plain; charset=utf-8")

        def do_HEAD(self) -> None:
            self.do_GET()

        def _metrics(self) -> None:
            _, content_type = choose_encoder(self.headers.get("Accept", ""))
            openmetrics = content_type.startswith("application/openmetrics-text")
            gzipped = gzip_accepted(self.headers.get("Accept-Encoding"))
            body, content_type = exposition().body(openmetrics, gzipped)
            headers = {"Content-Encoding": "gzip"} if gzipped else {}
            self._send(200, body, content_type, headers)

        def _page(self, page: Page) -> None:
            body = rendered(page.name)
            if body is None:
                text = f"No {page.name} yet: the exporter has not joined any cost data.\n"
                retry = {"Retry-After": "30"}
                self._send(503, text.encode(), "text/plain; charset=utf-8", retry)
            else:
                self._send(200, body, page.content_type, dict(page.headers))

        def _send(
            self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("http %s", format % args)

    return Handler

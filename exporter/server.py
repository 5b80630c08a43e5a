"""HTTP serving: cached exposition bytes on the telemetry path, health, and a landing page."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client.exposition import choose_encoder

from exporter import __version__
from exporter.exposition import Exposition

__all__ = ["MetricsServer", "parse_listen_address"]

log = logging.getLogger(__name__)

LANDING = """<!DOCTYPE html>
<html><head><title>GPU chargeback exporter</title></head>
<body><h1>GPU chargeback exporter</h1>
<p>Version {version}. Per-team GPU and LLM chargeback from OpenCost, DCGM, Kueue and LiteLLM.</p>
<ul><li><a href="{path}">{path}</a>: metrics</li>
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
    """Serves whatever `exposition()` returns; it never computes and never calls an upstream."""

    def __init__(
        self, address: tuple[str, int], telemetry_path: str, exposition: Callable[[], Exposition]
    ) -> None:
        handler = _handler_class(telemetry_path, exposition)
        self._httpd = ThreadingHTTPServer(address, handler)
        self._httpd.daemon_threads = True
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
        self._httpd.shutdown()
        self._httpd.server_close()


def _handler_class(
    telemetry_path: str, exposition: Callable[[], Exposition]
) -> type[BaseHTTPRequestHandler]:
    landing = LANDING.format(version=__version__, path=telemetry_path).encode()

    class Handler(BaseHTTPRequestHandler):
        server_version = f"gpu-chargeback-exporter/{__version__}"

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == telemetry_path:
                self._metrics()
            elif path == "/healthz":
                self._send(200, b"ok\n", "text/plain; charset=utf-8")
            elif path == "/":
                self._send(200, landing, "text/html; charset=utf-8")
            else:
                self._send(404, b"404 page not found\n", "text/plain; charset=utf-8")

        def do_HEAD(self) -> None:
            self.do_GET()

        def _metrics(self) -> None:
            _, content_type = choose_encoder(self.headers.get("Accept", ""))
            openmetrics = content_type.startswith("application/openmetrics-text")
            gzipped = "gzip" in self.headers.get("Accept-Encoding", "")
            body, content_type = exposition().body(openmetrics, gzipped)
            headers = {"Content-Encoding": "gzip"} if gzipped else {}
            self._send(200, body, content_type, headers)

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

"""What each path answers: cached exposition bytes, health, the landing page and the pages."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prometheus_client.exposition import choose_encoder

from exporter import __version__
from exporter.exposition.render import Exposition
from exporter.serve.http1 import Request, Response
from exporter.serve.pages import Page
from exporter.serve.runbook import RUNBOOK_HEADERS, runbook_page

__all__ = ["HEALTH_PATH", "RUNBOOK_PATH", "Health", "Routes", "gzip_accepted"]

HEALTH_PATH = "/healthz"
# The alerts' runbook of this version, shipped in the package (exporter/serve/runbook.py).
RUNBOOK_PATH = "/runbook"
# (healthy, the words /healthz says): the serving process's own view of its worker.
Health = Callable[[], tuple[bool, str]]

LANDING = """<!DOCTYPE html>
<html><head><title>GPU chargeback exporter</title></head>
<body><h1>GPU chargeback exporter</h1>
<p>Version {version}. Per-team GPU and LLM chargeback from OpenCost, DCGM, Kueue and LiteLLM.</p>
<ul><li><a href="{path}">{path}</a>: metrics</li>{pages}
<li><a href="/runbook">/runbook</a>: what to do when an alert fires</li>
<li><a href="/healthz">/healthz</a>: health</li></ul>
</body></html>
"""
_HTML = "text/html; charset=utf-8"


def _always_ok() -> tuple[bool, str]:
    return True, "ok"


class Routes:
    """Answers a request from what is already rendered; it never computes or calls upstream.

    Args:
        pages: published beside the metrics, each at its path with what `rendered(name)`
            returns (bytes the worker rendered), or 503 while that is None (no join yet).
        health: what /healthz reports; unhealthy answers 503.
    """

    def __init__(
        self,
        telemetry_path: str,
        exposition: Callable[[], Exposition],
        pages: Sequence[Page] = (),
        rendered: Callable[[str], bytes | None] = lambda name: None,
        health: Health = _always_ok,
    ) -> None:
        links = "".join(
            f'\n<li><a href="{p.path}">{p.path}</a>: {p.description}</li>' for p in pages
        )
        self._landing = LANDING.format(version=__version__, path=telemetry_path, pages=links)
        self._telemetry_path = telemetry_path
        self._exposition = exposition
        self._pages = {page.path: page for page in pages}
        self._rendered = rendered
        self._health = health

    def answer(self, request: Request) -> Response:
        """The response to a GET (a HEAD gets the same head)."""
        if request.method not in ("GET", "HEAD"):
            return Response(405, b"Method not allowed\n", headers={"Allow": "GET, HEAD"})
        path = request.path
        if path == self._telemetry_path:
            return self._metrics(request)
        if path == HEALTH_PATH:
            healthy, words = self._health()
            return Response(200 if healthy else 503, f"{words}\n".encode())
        if path == "/":
            return Response(200, self._landing.encode(), _HTML)
        if path in self._pages:
            return self._page(self._pages[path])
        if path == RUNBOOK_PATH:
            return Response(200, runbook_page(), _HTML, RUNBOOK_HEADERS)
        return Response(404, b"404 page not found\n")

    def _metrics(self, request: Request) -> Response:
        _, content_type = choose_encoder(request.header("Accept") or "")
        openmetrics = content_type.startswith("application/openmetrics-text")
        gzipped = gzip_accepted(request.header("Accept-Encoding"))
        body, content_type = self._exposition().body(openmetrics, gzipped)
        headers = {"Content-Encoding": "gzip"} if gzipped else {}
        return Response(200, body, content_type, headers)

    def _page(self, page: Page) -> Response:
        body = self._rendered(page.name)
        if body is None:
            text = f"No {page.name} yet: the exporter has not joined any cost data.\n"
            return Response(503, text.encode(), headers={"Retry-After": "30"})
        return Response(200, body, page.content_type, dict(page.headers))


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

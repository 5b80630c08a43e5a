"""What each path answers, and which Accept-Encoding headers admit gzip."""

from __future__ import annotations

import pytest

from exporter.exposition.catalogue.health import SOURCE_UP
from exporter.exposition.render import render
from exporter.exposition.samples import Sample
from exporter.serve.http1 import Request
from exporter.serve.routes import Routes, gzip_accepted

EXPOSITION = render([Sample.of(SOURCE_UP, 1.0, source="opencost")])


def _get(path: str, method: str = "GET", **headers: str) -> Request:
    return Request(method, path, {k.lower().replace("_", "-"): v for k, v in headers.items()})


def test_paths() -> None:
    routes = Routes("/m", lambda: EXPOSITION)
    metrics = routes.answer(_get("/m?x=1", accept_encoding="identity"))
    assert metrics.status == 200 and metrics.body == EXPOSITION.text
    assert routes.answer(_get("/healthz")).body == b"ok\n"
    assert b'<a href="/m">' in routes.answer(_get("/")).body
    assert routes.answer(_get("/metrics")).status == 404
    assert routes.answer(_get("/m", "POST")).status == 405


def test_gzip_and_openmetrics_when_asked() -> None:
    routes = Routes("/m", lambda: EXPOSITION)
    accept = "application/openmetrics-text;version=1.0.0"
    answer = routes.answer(_get("/m", accept=accept, accept_encoding="gzip"))
    assert answer.body == EXPOSITION.openmetrics_gzip
    assert answer.headers == {"Content-Encoding": "gzip"}


def test_health_reports_what_it_is_told() -> None:
    routes = Routes("/m", lambda: EXPOSITION, health=lambda: (False, "no worker"))
    answer = routes.answer(_get("/healthz"))
    assert (answer.status, answer.body) == (503, b"no worker\n")


@pytest.mark.parametrize(
    ("accept_encoding", "gzipped"),
    [
        ("gzip", True),
        ("gzip;q=0", False),
        ("gzip; q=0.000", False),
        ("*", True),
        ("*;q=0", False),
        ("identity", False),
        (None, False),
        ("", False),
        ("deflate, br", False),
        ("GZIP;Q=1.0", True),
        ("x-gzip", True),
        ("gzip;q=0.5", True),
        ("gzip;q=0.5, identity", False),
        ("identity;q=0.2, gzip;q=0.8", True),
        ("br;q=1.0, gzip;q=0.8, *;q=0.1", True),
        ("*, gzip;q=0", False),
        ("gzip;q=bogus", False),
        ("gzip;q=2", False),
    ],
)
def test_accept_encoding(accept_encoding: str | None, gzipped: bool) -> None:
    assert gzip_accepted(accept_encoding) is gzipped

"""HTTP: cached bytes on the telemetry path, content negotiation, gzip, health and landing page."""

from __future__ import annotations

import gzip
from collections.abc import Iterator

import httpx
import pytest

from exporter.exposition import render
from exporter.metrics import SOURCE_UP
from exporter.samples import Sample
from exporter.server import MetricsServer, parse_listen_address


@pytest.fixture
def base_url() -> Iterator[str]:
    exposition = render([Sample.of(SOURCE_UP, 1.0, source="opencost")])
    server = MetricsServer(("127.0.0.1", 0), "/custom-metrics", lambda: exposition)
    server.start()
    yield f"http://127.0.0.1:{server.port}"
    server.stop()


def test_text_format(base_url: str) -> None:
    response = httpx.get(f"{base_url}/custom-metrics", headers={"Accept-Encoding": "identity"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert 'chargeback_source_up{source="opencost"} 1.0' in response.text


def test_openmetrics_when_asked(base_url: str) -> None:
    accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
    response = httpx.get(f"{base_url}/custom-metrics", headers={"Accept": accept})
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    assert response.text.endswith("# EOF\n")


def test_gzip_when_accepted(base_url: str) -> None:
    with httpx.Client() as client:
        request = client.build_request("GET", f"{base_url}/custom-metrics")
        request.headers["Accept-Encoding"] = "gzip"
        response = client.send(request, stream=True)
        raw = b"".join(response.iter_raw())
    assert response.headers["content-encoding"] == "gzip"
    assert b"chargeback_source_up" in gzip.decompress(raw)


def test_health_landing_and_404(base_url: str) -> None:
    assert httpx.get(f"{base_url}/healthz").text == "ok\n"
    landing = httpx.get(f"{base_url}/")
    assert '<a href="/custom-metrics">' in landing.text
    assert httpx.get(f"{base_url}/metrics").status_code == 404


def test_listen_address() -> None:
    assert parse_listen_address(":10290") == ("0.0.0.0", 10290)
    assert parse_listen_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_listen_address("[::1]:10290") == ("::1", 10290)
    with pytest.raises(ValueError):
        parse_listen_address("10290")

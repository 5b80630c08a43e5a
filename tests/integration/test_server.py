"""HTTP: cached bytes on the telemetry path, content negotiation, gzip, health and landing page."""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from exporter.exposition.catalogue import SOURCE_UP
from exporter.exposition.render import Exposition, render
from exporter.exposition.samples import Sample
from exporter.serve.server import MetricsServer

EXPOSITION = render([Sample.of(SOURCE_UP, 1.0, source="opencost")])


@pytest.fixture
def base_url() -> Iterator[str]:
    server = MetricsServer(("127.0.0.1", 0), "/custom-metrics", lambda: EXPOSITION)
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


def test_gzip_refused_with_q_zero(base_url: str) -> None:
    with httpx.Client() as client:
        request = client.build_request("GET", f"{base_url}/custom-metrics")
        request.headers["Accept-Encoding"] = "gzip;q=0, identity"
        response = client.send(request, stream=True)
        raw = b"".join(response.iter_raw())
    assert "content-encoding" not in response.headers
    assert raw.startswith(b"# HELP")


def _closed_by_server(sock: socket.socket) -> bool:
    """Read until the server closes; a generous client-side limit only guards against hangs."""
    sock.settimeout(20)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.mark.parametrize("sent", [b"", b"GET /custom-metrics HTTP/1.1\r\nHost: x\r\n"])
def test_an_idle_connection_is_closed_and_frees_its_slot(sent: bytes) -> None:
    # One slot, held by a client that sends nothing (or stops mid-headers): the timeout must
    # close it, or the real scrape behind it would never be served.
    server = MetricsServer(
        ("127.0.0.1", 0), "/custom-metrics", lambda: EXPOSITION, idle_timeout=0.2, max_connections=1
    )
    server.start()
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as idle:
            idle.sendall(sent)
            response = httpx.get(f"http://127.0.0.1:{server.port}/custom-metrics", timeout=20)
            assert response.status_code == 200
            assert _closed_by_server(idle)
    finally:
        server.stop()


class _Gate:
    """An exposition that holds every caller until opened, counting how many are inside."""

    def __init__(self) -> None:
        self.inside = 0
        self.most_inside = 0
        self.changed = threading.Condition()
        self.open = threading.Event()

    def __call__(self) -> Exposition:
        with self.changed:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
            self.changed.notify_all()
        self.open.wait(20)
        with self.changed:
            self.inside -= 1
        return EXPOSITION


def test_connections_beyond_the_bound_wait_and_are_all_served() -> None:
    gate = _Gate()
    server = MetricsServer(("127.0.0.1", 0), "/metrics", gate, max_connections=2)
    server.start()
    url = f"http://127.0.0.1:{server.port}/metrics"
    statuses: list[int] = []

    def scrape() -> None:
        statuses.append(httpx.get(url, timeout=30).status_code)

    clients = [threading.Thread(target=scrape) for _ in range(7)]
    try:
        for client in clients:
            client.start()
        with gate.changed:
            assert gate.changed.wait_for(lambda: gate.inside == 2, timeout=20)
        # Time for an unbounded server to let a third request in; a bounded one never does.
        time.sleep(0.3)
        gate.open.set()
        for client in clients:
            client.join(30)
    finally:
        gate.open.set()
        server.stop()
    assert statuses == [200] * 7
    assert gate.most_inside == 2

"""The real server under a web config: TLS, client certificates and basic auth over loopback."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from exporter.config.web import WebServing, load_web_config
from exporter.exposition.catalogue.health import SOURCE_UP
from exporter.exposition.render import render
from exporter.exposition.samples import Sample
from exporter.serve.pages import Page
from exporter.serve.server import MetricsServer
from tests.unit.config.test_web import HASH, HASH_2Y, PASSWORD, TLS_ONLY, _basic, _web_config

EXPOSITION = render([Sample.of(SOURCE_UP, 1.0, source="dcgm")])


@pytest.fixture
def serve() -> Iterator[Callable[[WebServing], str]]:
    servers: list[MetricsServer] = []

    def start(web: WebServing) -> str:
        server = MetricsServer(
            ("127.0.0.1", 0), "/metrics", lambda: EXPOSITION, tls=web.tls, auth=web.auth
        )
        server.start()
        servers.append(server)
        return f"{'https' if web.tls else 'http'}://127.0.0.1:{server.port}"

    yield start
    for server in servers:
        server.stop()


def _client_context(certs: Path, client_pem: str | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(certs / "server-ca.crt"))
    if client_pem:
        context.load_cert_chain(str(certs / client_pem))
    return context


def _get(url: str, context: ssl.SSLContext, **kwargs: object) -> httpx.Response:
    with httpx.Client(verify=context, timeout=20) as client:
        return client.get(url, **kwargs)  # type: ignore[arg-type]


def test_tls_serves_metrics_to_a_verifying_client(
    certs: Path, serve: Callable[[WebServing], str]
) -> None:
    # Relative file names resolve against the web config's folder, as in the toolkit.
    url = serve(load_web_config(_web_config(certs, TLS_ONLY)))
    assert url.startswith("https://")
    response = _get(f"{url}/metrics", _client_context(certs))
    assert response.status_code == 200
    assert 'chargeback_source_up{source="dcgm"} 1.0' in response.text
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/metrics", timeout=20)  # the system CAs do not know our test CA


def test_require_and_verify_client_cert(certs: Path, serve: Callable[[WebServing], str]) -> None:
    text = TLS_ONLY + (
        "  client_ca_file: client-ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n"
    )
    url = serve(load_web_config(_web_config(certs, text)))
    with pytest.raises(httpx.TransportError):
        _get(f"{url}/metrics", _client_context(certs))
    with pytest.raises(httpx.TransportError):
        _get(f"{url}/metrics", _client_context(certs, "stranger.pem"))
    assert _get(f"{url}/metrics", _client_context(certs, "client.pem")).status_code == 200


def test_verify_client_cert_if_given(certs: Path, serve: Callable[[WebServing], str]) -> None:
    text = (
        TLS_ONLY + "  client_ca_file: client-ca.crt\n  client_auth_type: VerifyClientCertIfGiven\n"
    )
    url = serve(load_web_config(_web_config(certs, text)))
    assert _get(f"{url}/healthz", _client_context(certs)).status_code == 200
    assert _get(f"{url}/healthz", _client_context(certs, "client.pem")).status_code == 200
    with pytest.raises(httpx.TransportError):
        _get(f"{url}/healthz", _client_context(certs, "stranger.pem"))


@pytest.mark.parametrize("policy", ["NoClientCert", "RequestClientCert"])
def test_policies_that_admit_any_client(
    certs: Path, serve: Callable[[WebServing], str], policy: str
) -> None:
    ca_line = "  client_ca_file: client-ca.crt\n" if policy == "RequestClientCert" else ""
    text = TLS_ONLY + ca_line + f"  client_auth_type: {policy}\n"
    url = serve(load_web_config(_web_config(certs, text)))
    for client_pem in (None, "client.pem", "stranger.pem"):
        assert _get(f"{url}/healthz", _client_context(certs, client_pem)).status_code == 200


def test_basic_auth_over_tls(certs: Path, serve: Callable[[WebServing], str]) -> None:
    text = TLS_ONLY + f"basic_auth_users:\n  prometheus: '{HASH}'\n  grafana: '{HASH_2Y}'\n"
    url = serve(load_web_config(_web_config(certs, text)))
    context = _client_context(certs)
    for path in ("/metrics", "/healthz", "/", "/nowhere"):
        for headers in ({}, _basic("prometheus", "wrong"), _basic("nobody", PASSWORD)):
            response = _get(f"{url}{path}", context, headers=headers)
            assert response.status_code == 401, (path, headers)
            assert response.headers["www-authenticate"] == "Basic"
            assert "chargeback" not in response.text
    metrics = _get(f"{url}/metrics", context, auth=("prometheus", PASSWORD))
    assert metrics.status_code == 200
    assert 'chargeback_source_up{source="dcgm"} 1.0' in metrics.text
    assert _get(f"{url}/", context, auth=("grafana", PASSWORD)).status_code == 200
    assert _get(f"{url}/nowhere", context, auth=("grafana", PASSWORD)).status_code == 404


def test_basic_auth_without_tls(tmp_path: Path, serve: Callable[[WebServing], str]) -> None:
    url = serve(load_web_config(_web_config(tmp_path, f"basic_auth_users:\n  p: {HASH}\n")))
    assert url.startswith("http://")
    assert httpx.get(f"{url}/metrics").status_code == 401
    assert httpx.get(f"{url}/metrics", auth=("p", PASSWORD)).status_code == 200


STATEMENT = Page("statement", "/statement", "the statement", lambda c, n: b"", "text/html")


@pytest.mark.parametrize("open_health", [True, False])
def test_healthz_without_auth_opens_health_and_nothing_else(
    tmp_path: Path, open_health: bool
) -> None:
    web = load_web_config(_web_config(tmp_path, f"basic_auth_users:\n  p: {HASH}\n"))
    server = MetricsServer(
        ("127.0.0.1", 0),
        "/metrics",
        lambda: EXPOSITION,
        auth=web.auth,
        healthz_without_auth=open_health,
        pages=[STATEMENT],
        rendered=lambda name: b"<html>statement</html>",
    )
    server.start()
    url = f"http://127.0.0.1:{server.port}"
    try:
        health = httpx.get(f"{url}/healthz")
        assert health.status_code == (200 if open_health else 401)
        assert httpx.get(f"{url}/healthz?probe=1").status_code == health.status_code
        assert httpx.head(f"{url}/healthz").status_code == health.status_code
        # Every other path, and every spelling that is not /healthz itself, still asks.
        for path in ("/metrics", "/", "/statement", "/healthz/", "//healthz", "/healthz%2f"):
            response = httpx.get(f"{url}{path}")
            assert response.status_code == 401, path
            assert "chargeback" not in response.text
        for path in ("/metrics", "/healthz", "/statement"):
            assert httpx.get(f"{url}{path}", auth=("p", PASSWORD)).status_code == 200, path
        with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
            sock.sendall(b"GET http://x/healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # absolute form
            assert sock.recv(65536).startswith(b"HTTP/1.1 401 ")
    finally:
        server.stop()

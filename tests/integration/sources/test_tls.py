"""TLS to every HTTPS upstream: verified, against the source's `ca_file` when it has one."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import trustme

from exporter.config.schema import Config
from exporter.errors import UpstreamError
from exporter.sources.clients import make_client
from exporter.sources.deadline import refresh_deadline
from exporter.sources.http import get_text
from exporter.sources.registry import SOURCES
from tests.integration.sources.test_http import Dripper
from tests.unit.sources.test_http import DCGM_TEXT, Stopwatch, policy


@pytest.fixture(scope="module")
def private_ca(tmp_path_factory: pytest.TempPathFactory) -> tuple[ssl.SSLContext, str]:
    """A server TLS context for localhost, and the file of the private CA that signed it."""
    ca = trustme.CA()
    ca_file = tmp_path_factory.mktemp("tls") / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(context)
    return context, str(ca_file)


@pytest.fixture(scope="module")
def tls_upstream(private_ca: tuple[ssl.SSLContext, str]) -> Iterator[tuple[str, str]]:
    """An HTTPS loopback server whose certificate only a private CA vouches for."""
    context, ca_file = private_ca

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = DCGM_TEXT.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield f"https://localhost:{httpd.server_address[1]}", ca_file
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("name", ["opencost", "dcgm", "litellm"])
def test_every_https_source_trusts_its_ca_file(
    tls_upstream: tuple[str, str], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, ca_file = tls_upstream
    monkeypatch.setenv("TEST_LITELLM_KEY", "sk-tls-test-0123456789")
    sections: dict[str, dict[str, Any]] = {
        "opencost": {"url": url},
        "dcgm": {"urls": [f"{url}/metrics"]},
        "litellm": {"url": url, "api_key_env": "TEST_LITELLM_KEY", "currency": "EUR"},
    }
    section = sections[name]
    kind = SOURCES[name]
    for extra, expected in [({}, "unreachable"), ({"ca_file": ca_file}, "ok")]:
        config = Config.model_validate({"sources": {name: {**section, **extra}}})
        with kind.build_client(kind.section(config)) as client:
            try:
                got = "ok" if get_text(client, name, f"{url}/metrics") == DCGM_TEXT else "wrong"
            except UpstreamError as exc:
                got = exc.reason
        assert got == expected, extra  # the system trust store does not know the private CA


def test_a_certificate_that_fails_to_verify_is_not_retried(tls_upstream: tuple[str, str]) -> None:
    url, _ = tls_upstream
    watch = Stopwatch()
    with (
        make_client(url, timedelta(seconds=5)) as client,
        refresh_deadline(policy(watch).start(60)),
        pytest.raises(UpstreamError) as caught,
    ):
        get_text(client, "opencost", "/allocation")
    assert caught.value.reason == "unreachable" and "CERTIFICATE_VERIFY_FAILED" in str(caught.value)
    assert watch.sleeps == []


def test_a_dripping_https_upstream_is_cut_at_the_call_deadline(
    private_ca: tuple[ssl.SSLContext, str],
) -> None:
    context, ca_file = private_ca
    with (
        Dripper("headers", tls=context) as server,
        make_client(server.url, timedelta(seconds=0.5), ca_file=ca_file) as client,
        pytest.raises(UpstreamError) as caught,
    ):
        get_text(client, "litellm", "/v2/team/list")
    assert str(caught.value) == "litellm: GET /v2/team/list passed its call deadline of 0.5s"
    assert server.sent < len(server.head) // 2

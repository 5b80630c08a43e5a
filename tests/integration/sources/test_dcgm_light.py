"""DCGM's light client on real sockets, against answers shaped as Go's net/http sends them.

dcgm-exporter writes its body in one Write with no Content-Length, so Go sends anything over
2 KiB chunked, on a kept connection; a server may also close an idle connection under a
client that meant to reuse it. Over TLS, the source's `ca_file` is the trust.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest
import trustme

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_dcgm import FakeDcgmOptions, render_metrics
from exporter.config.schema import DcgmConfig
from exporter.errors import UpstreamError
from exporter.sources.dcgm.source import build_client
from tests.conftest import FIXED_NOW
from tests.unit.sources.dcgm.test_source import fetch

SECOND = replace(CLUSTER, node="gpu-node-2", gpu_count=1)
BODIES = {
    f"/{c.node}/metrics": render_metrics(c, FIXED_NOW, FakeDcgmOptions()).encode()
    for c in (CLUSTER, SECOND)
}
HANG_GUARD = 30.0  # a socket's patience against a hang, never a judgement of speed


class GoLike:
    """Answers GET /<node>/metrics chunked, as Go does; `close_idle` closes after each answer
    without saying so (an idle timeout that fell just then)."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.close_idle = False
        self.accepted = 0
        self._tls = tls
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def urls(self, scheme: str = "http", host: str = "127.0.0.1") -> tuple[str, ...]:
        return tuple(f"{scheme}://{host}:{self.port}{path}" for path in sorted(BODIES))

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        with contextlib.suppress(OSError), raw:
            raw.settimeout(HANG_GUARD)
            # The TLS socket takes the connection over: closing it closes the connection.
            with self._tls.wrap_socket(raw, server_side=True) if self._tls else raw as conn:
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        pending = b""
        while True:
            while b"\r\n\r\n" not in pending:
                data = conn.recv(65536)
                if not data:
                    return
                pending += data
            head, _, pending = pending.partition(b"\r\n\r\n")
            body = BODIES.get(head.split(b" ")[1].decode(), b"")
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                b"X-Content-Type-Options: nosniff\r\nTransfer-Encoding: chunked\r\n\r\n"
                + b"%x\r\n%s\r\n0\r\n\r\n"
                % (len(body), body)
            )
            if self.close_idle:
                return

    def stop(self) -> None:
        self._listener.close()


@pytest.fixture(scope="module")
def server() -> Iterator[GoLike]:
    upstream = GoLike()
    yield upstream
    upstream.stop()


@pytest.mark.parametrize("close_idle", [False, True])
def test_chunked_answers_on_kept_or_closed_connections_read_every_gpu(
    server: GoLike, close_idle: bool
) -> None:
    server.close_idle, before = close_idle, server.accepted
    cfg = DcgmConfig(urls=server.urls(), concurrency=1)
    with build_client(cfg) as client:
        snapshot = fetch(client, cfg)
    assert len(snapshot.gpus) == CLUSTER.gpu_count + SECOND.gpu_count
    assert {r.node for r in snapshot.gpus} == {CLUSTER.node, SECOND.node}
    # One connection for both endpoints when it is kept; one each when the server closes it.
    assert server.accepted - before == (2 if close_idle else 1)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GoLike, str]]:
    ca = trustme.CA()
    ca_file = tmp_path_factory.mktemp("light-tls") / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(context)
    upstream = GoLike(tls=context)
    yield upstream, str(ca_file)
    upstream.stop()


def test_https_trusts_the_ca_file_and_nothing_else(tls_server: tuple[GoLike, str]) -> None:
    server, ca_file = tls_server
    trusted = DcgmConfig(urls=server.urls("https", "localhost"), ca_file=ca_file)
    with build_client(trusted) as client:
        assert len(fetch(client, trusted).gpus) == CLUSTER.gpu_count + SECOND.gpu_count
    untrusted = DcgmConfig(urls=server.urls("https", "localhost"))
    with build_client(untrusted) as client, pytest.raises(UpstreamError) as caught:
        fetch(client, untrusted)
    assert caught.value.reason == "unreachable"
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)

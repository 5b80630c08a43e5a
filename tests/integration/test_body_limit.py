"""Replies too large to hold: the worker stays within its memory bound and the source says why.

An upstream answers with a gzip bomb (4 MiB that inflates to 4 GiB) or an identity body that
never ends; the real exporter's worker must stop reading at the source's `max_response_size`,
keep its peak resident memory under the bound docs/performance.md states, and mark the source
down with reason `too_large`.
"""

from __future__ import annotations

import socket
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.process import Exporter, peak_rss_mib, until

LIMIT_MIB = 64
# docs/performance.md: the worker's own footprint, plus each reply being read, whole.
WORKER_BASE_MIB = 96
_MIB = 1 << 20
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def _zeros_block() -> bytes:
    """One MiB of zeros as a raw deflate block that needs no earlier bytes (about 1 KiB)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(bytes(_MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)


class _Flood:
    """A server that answers every GET with an endless 200: gzip of zeros, or plain bytes."""

    def __init__(self, gzip: bool) -> None:
        self.gzip = gzip
        self.sent = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        block = _zeros_block() if self.gzip else b"[" + b"0," * (_MIB // 2 - 1) + b"0"
        coding = b"Content-Encoding: gzip\r\n" if self.gzip else b""
        with conn:
            try:
                head = b""
                while b"\r\n\r\n" not in head:
                    data = conn.recv(4096)
                    if not data:
                        return
                    head += data
                # No length: the body ends when the connection does, which is never.
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + coding
                    + b"Connection: close\r\n\r\n"
                    + (_GZIP_HEADER if self.gzip else b"")
                )
                for _ in range(4096):  # 4 GiB once inflated (gzip) or sent (plain)
                    conn.sendall(block)
                    self.sent += len(block)
            except OSError:
                return

    def stop(self) -> None:
        self._listener.close()


@pytest.fixture(params=["gzip bomb", "endless body"])
def flood(request: pytest.FixtureRequest) -> Iterator[_Flood]:
    server = _Flood(gzip=request.param == "gzip bomb")
    yield server
    server.stop()


def test_a_reply_past_the_limit_stops_the_read_within_the_memory_bound(
    flood: _Flood, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "sources:\n"
        f'  opencost: {{url: "{flood.url}", interval: 5m, max_response_size: {LIMIT_MIB}MiB}}\n',
        encoding="utf-8",
    )
    child = Exporter(config, tmp_path / "exporter.log")
    try:
        until(
            "the source down as too large",
            lambda: (
                'chargeback_source_errors_total{reason="too_large",source="opencost"} 1.0'
                in child.metrics()
            ),
        )
        peak = peak_rss_mib(child.worker())
        assert 'chargeback_source_up{source="opencost"} 0.0' in child.metrics()
    finally:
        child.stop()
    print(f"{'gzip' if flood.gzip else 'plain'}: worker peak {peak:.0f} MiB, sent {flood.sent} B")
    assert peak < WORKER_BASE_MIB + LIMIT_MIB
    assert "max_response_size (64MiB)" in child.logged()
    assert "Traceback" not in child.logged()

"""Bodies inflated a bounded step at a time: the limit holds whatever the compression ratio."""

from __future__ import annotations

import gzip
import zlib

import pytest

from exporter.errors import UpstreamPayloadError, UpstreamTooLarge
from exporter.sources.inflate import Inflater, format_bytes

BODY = b'{"data": [' + b"1, " * 10_000 + b"2]}"
# Gzip members carry mtime=0, not the time of collection: a parameter (and so a test id) must be
# the same in every pytest-xdist worker, which each collect at their own instant.


def _read(inflater: Inflater, raw: bytes, chunk: int = 4096) -> bytes:
    out = b"".join(p for i in range(0, len(raw), chunk) for p in inflater.feed(raw[i : i + chunk]))
    inflater.finish()
    return out


@pytest.mark.parametrize(
    ("coding", "raw"),
    [
        (None, BODY),
        ("identity", BODY),
        ("gzip", gzip.compress(BODY, mtime=0)),
        ("x-gzip", gzip.compress(BODY, mtime=0)),
        ("deflate", zlib.compress(BODY)),
        # Some servers send raw deflate under "deflate".
        ("deflate", zlib.compress(BODY)[2:-4]),
        # Two gzip members one after the other are one body (RFC 1952).
        ("gzip", gzip.compress(BODY[:100], mtime=0) + gzip.compress(BODY[100:], mtime=0)),
    ],
)
def test_every_coding_reads_the_same_body(coding: str | None, raw: bytes) -> None:
    assert _read(Inflater("s: /p", coding, 1 << 20), raw) == BODY


def test_a_bomb_stops_one_step_past_the_limit() -> None:
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    bomb = compressor.compress(bytes(64 << 20)) + compressor.flush()  # 64 MiB in ~64 KiB
    inflater = Inflater("opencost: /allocation", "gzip", 1 << 20)
    held = 0
    with pytest.raises(UpstreamTooLarge, match=r"max_response_size \(1MiB\)") as caught:
        for piece in inflater.feed(bomb):
            held += len(piece)
    assert held <= 1 << 20  # never handed more than the limit
    assert caught.value.reason == "too_large"


@pytest.mark.parametrize(
    ("coding", "raw", "said"),
    [
        ("br", b"x", "unsupported Content-Encoding br"),
        ("gzip, gzip", b"x", "unsupported Content-Encoding"),
        ("gzip", b"not gzip at all", "corrupt"),
        ("gzip", gzip.compress(BODY, mtime=0)[:-20], "ends early"),
    ],
)
def test_what_cannot_be_inflated_is_malformed(coding: str, raw: bytes, said: str) -> None:
    with pytest.raises(UpstreamPayloadError, match=said) as caught:
        _read(Inflater("s: /p", coding, 1 << 20), raw)
    assert caught.value.reason == "malformed"


def test_sizes_read_as_the_config_writes_them() -> None:
    assert [format_bytes(n) for n in (128 << 20, 1 << 30, 512 << 10, 1000)] == [
        "128MiB",
        "1GiB",
        "512KiB",
        "1000B",
    ]

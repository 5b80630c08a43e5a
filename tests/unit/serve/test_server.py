"""The server's parsing: the listen address and which Accept-Encoding headers admit gzip."""

from __future__ import annotations

import pytest

from exporter.serve.server import gzip_accepted, parse_listen_address


def test_listen_address() -> None:
    assert parse_listen_address(":10290") == ("0.0.0.0", 10290)
    assert parse_listen_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_listen_address("[::1]:10290") == ("::1", 10290)
    with pytest.raises(ValueError):
        parse_listen_address("10290")


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

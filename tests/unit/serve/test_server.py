"""The server's listen address: every interface, IPv4, IPv6 in brackets, and what is refused."""

from __future__ import annotations

import pytest

from exporter.serve.server import parse_listen_address


def test_listen_address() -> None:
    assert parse_listen_address(":10290") == ("", 10290)  # every interface
    assert parse_listen_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_listen_address("[::1]:10290") == ("::1", 10290)
    assert parse_listen_address("[::]:0") == ("::", 0)
    assert parse_listen_address("localhost:80") == ("localhost", 80)


@pytest.mark.parametrize("value", ["10290", "::1:10290", "[]:80", "[::1:80", "host:99999", "h:x"])
def test_listen_address_refused(value: str) -> None:
    with pytest.raises(ValueError):
        parse_listen_address(value)

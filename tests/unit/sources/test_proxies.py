"""The proxies read from the environment: which pattern goes through which proxy, or none."""

from __future__ import annotations

import httpx
import pytest

from exporter.sources.proxies import environment_proxies

_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _NAMES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def test_no_proxy_named_is_no_mount() -> None:
    assert environment_proxies() == {}


def test_proxies_and_the_hosts_sent_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "proxy.internal:3128")  # no scheme: http://
    monkeypatch.setenv("NO_PROXY", "localhost, 10.0.0.0/8,::1,.svc,example.com,http://plain")
    mounts = environment_proxies()
    proxy = mounts.pop("https://")
    assert isinstance(proxy, httpx.Proxy) and proxy.url == "http://proxy.internal:3128"
    assert mounts == {
        "all://localhost": None,
        "all://10.0.0.0/8": None,
        "all://[::1]": None,
        "all://*.svc": None,
        "all://*example.com": None,
        "http://plain": None,
    }


def test_a_star_sends_every_host_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALL_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "a.example,*")
    assert environment_proxies() == {}

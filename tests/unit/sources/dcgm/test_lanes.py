"""Which client scrapes DCGM: the light one when it can send every URL, httpx otherwise."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from exporter.config.schema import DcgmConfig
from exporter.sources.dcgm.lanes import go_light, scrapers
from exporter.sources.dcgm.source import build_client
from exporter.sources.http_light import LightClient

URLS = ["http://10.0.0.7:9400/metrics", "https://[fd00::8]:9400/metrics"]


def _kinds(client: httpx.Client, urls: list[str]) -> set[str]:
    with scrapers(client, urls, 3) as free:
        found = [free.get() for _ in range(3)]
    owners = {getattr(getattr(s, "func", None), "__self__", None) for s in found}
    return {"light" if isinstance(o, LightClient) else "httpx" for o in owners}


@pytest.fixture(autouse=True)
def _no_proxy_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def test_listed_urls_on_real_sockets_go_light() -> None:
    with build_client(DcgmConfig(urls=tuple(URLS))) as client:
        assert _kinds(client, URLS) == {"light"}


def test_a_test_transport_keeps_httpx() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200))
    with build_client(DcgmConfig(urls=tuple(URLS)), transport) as client:
        assert _kinds(client, URLS) == {"httpx"}


def test_one_url_the_light_client_would_not_send_as_written_sends_the_refresh_by_httpx() -> None:
    urls = [*URLS, "http://10.0.0.9:9400/exporter/../metrics"]
    with build_client(DcgmConfig(urls=tuple(urls))) as client:
        assert _kinds(client, urls) == {"httpx"}
        assert _kinds(client, URLS) == {"light"}


def test_a_proxy_in_the_environment_keeps_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.internal:3128")
    with build_client(DcgmConfig(urls=tuple(URLS))) as client:
        assert _kinds(client, URLS) == {"httpx"}


def test_no_proxy_for_every_host_goes_light(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "*")
    client = httpx.Client()
    go_light(client, timedelta(seconds=5), True, follow_redirects=False)
    with client:
        assert _kinds(client, URLS) == {"light"}

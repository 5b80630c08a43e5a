"""Listed DCGM urls: scraped at once up to a bound, read in the list's order, failures named."""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx
import pytest

from exporter.config.schema import Config, DcgmConfig, SourcesConfig, load_config
from exporter.errors import ConfigError, UpstreamStatusError, UpstreamUnavailable
from exporter.sources.dcgm.source import KIND, DcgmSnapshot, build_client
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW, UTC_ZONE

WAIT = 30.0  # seconds a blocked mock waits before it gives up: only reached when a test fails


def body(host: str, value: int) -> str:
    # Labels in an order and spelling of their own: lower-case hostname, no UUID, a pod label.
    labels = f'hostname="{host}",gpu="0",modelName="NVIDIA L40S",team="t-{host}"'
    return f"DCGM_FI_DEV_GPU_UTIL{{{labels}}} {value}\n"


def urls(n: int) -> tuple[str, ...]:
    return tuple(f"http://n{i}:9400/metrics" for i in range(n))


def read(cfg: DcgmConfig, answer: Callable[[httpx.Request], httpx.Response]) -> DcgmSnapshot:
    with build_client(cfg, transport=httpx.MockTransport(answer)) as client:
        return KIND.fetch_from_config(
            client,
            Config(sources=SourcesConfig(dcgm=cfg)),
            Reading.open(FIXED_NOW, UTC_ZONE),
        )


def test_a_slow_endpoint_does_not_hold_up_the_others() -> None:
    cfg = DcgmConfig(urls=urls(20), concurrency=4)
    others_done = threading.Event()
    served: list[str] = []
    lock = threading.Lock()

    def answer(request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if host == "n0":
            # Answers only once every other endpoint has: one after another, it never would.
            assert others_done.wait(WAIT), "the other endpoints waited for the slow one"
        with lock:
            served.append(host)
            if len(served) == 19:
                others_done.set()
        return httpx.Response(200, text=body(host, int(host[1:])))

    snapshot = read(cfg, answer)
    assert served[-1] == "n0"
    # Snapshots in the fleet's order, not the order the answers came in.
    assert [r.node for r in snapshot.gpus] == [f"n{i}" for i in range(20)]
    assert [r.utilisation for r in snapshot.gpus if r.node == "n0"] == [0.0]


def test_no_more_than_concurrency_calls_at_once() -> None:
    cfg = DcgmConfig(urls=urls(12), concurrency=3)
    lock = threading.Lock()
    running, most = 0, 0
    three_in = threading.Barrier(3, timeout=WAIT)

    def answer(request: httpx.Request) -> httpx.Response:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        if request.url.host in ("n0", "n1", "n2"):
            three_in.wait()  # the bound is reached, not merely allowed
        with lock:
            running -= 1
        return httpx.Response(200, text=body(request.url.host, 1))

    assert len(read(cfg, answer).gpus) == 12
    assert most == 3


def test_the_first_failure_in_the_lists_order_fails_the_refresh_naming_its_url() -> None:
    cfg = DcgmConfig(urls=urls(8), concurrency=8)
    n7_failed = threading.Event()

    def answer(request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if host == "n3":
            # n7 fails first in time; n3 comes first in the list, so its error is the one.
            assert n7_failed.wait(WAIT)
            raise httpx.ConnectError("connection refused", request=request)
        if host == "n7":
            n7_failed.set()
            return httpx.Response(503, text="busy")
        return httpx.Response(200, text=body(host, 1))

    with pytest.raises(UpstreamUnavailable) as caught:
        read(cfg, answer)
    assert str(caught.value).startswith("dcgm: http://n3:9400/metrics: unreachable")
    assert caught.value.reason == "unreachable"


def test_a_status_error_keeps_its_status_and_reason() -> None:
    cfg = DcgmConfig(urls=urls(5), concurrency=2)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.host == "n2":
            return httpx.Response(502, text="bad gateway")
        return httpx.Response(200, text=body(request.url.host, 1))

    with pytest.raises(UpstreamStatusError) as caught:
        read(cfg, answer)
    assert (caught.value.status, caught.value.reason) == (502, "http_5xx")
    assert "http://n2:9400/metrics" in str(caught.value)


def test_concurrency_defaults_to_16(write_config: Callable[[str], str]) -> None:
    config = load_config(write_config('sources:\n  dcgm:\n    urls: ["http://a:9400/m"]\n'))
    assert config.sources.dcgm is not None and config.sources.dcgm.concurrency == 16


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("discovery: {}\n    concurrency: 8", "applies to urls only (set discovery.concurrency)"),
        ("prometheus: {url: 'http://p:9090'}\n    concurrency: 8", "applies to urls only"),
        ('urls: ["http://a:9400/m"]\n    concurrency: 0', "greater than or equal to 1"),
        ('urls: ["http://a:9400/m"]\n    concurrency: 257', "less than or equal to 256"),
    ],
)
def test_concurrency_is_a_urls_setting(
    write_config: Callable[[str], str], text: str, message: str
) -> None:
    path = write_config(f"sources:\n  dcgm:\n    {text}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    (line,) = caught.value.lines()
    assert line.startswith(f"{path}:4: sources.dcgm.concurrency: ")
    assert message in line

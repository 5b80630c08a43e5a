"""The real exporter is polite to its upstreams: it waits as long as a Retry-After asks, refuses
a page count it cannot read at once, reloads once for a burst of SIGHUPs, and never blocks on
a config path that is not a regular file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer, json_response
from chargeback_demo.stack import LITELLM_KEY, DemoStack
from tests.integration.process import Exporter, until


@pytest.fixture
def limited() -> Iterator[tuple[FakeServer, list[float]]]:
    """An OpenCost that answers every request 429 with `Retry-After: 30`."""
    seen: list[float] = []

    def answer(request: FakeRequest) -> FakeResponse:
        del request
        seen.append(time.monotonic())
        body = json.dumps({"error": "rate limited"}).encode()
        return FakeResponse(429, body, {"Content-Type": "application/json", "Retry-After": "30"})

    server = FakeServer(answer).start()
    yield server, seen
    server.stop()


def test_retry_after_is_honoured_across_refreshes(
    limited: tuple[FakeServer, list[float]], tmp_path: Path
) -> None:
    server, seen = limited
    config = tmp_path / "config.yaml"
    config.write_text(f'sources:\n  opencost: {{url: "{server.url}", interval: 1s}}\n', "utf-8")
    child = Exporter(config, tmp_path / "exporter.log")
    try:
        until(
            "the backoff in the source's health",
            lambda: 'chargeback_source_backoff_seconds{source="opencost"} 30.0' in child.metrics(),
        )
        asked = len(seen)
        time.sleep(6)  # six intervals: each would have asked again
        metrics = child.metrics()
    finally:
        child.stop()
    print(f"requests while told to wait 30 s, interval 1 s: {len(seen)}")
    assert asked == len(seen) == 1
    assert 'chargeback_source_up{source="opencost"} 0.0' in metrics
    assert 'chargeback_source_errors_total{reason="http_4xx",source="opencost"} 1.0' in metrics
    assert "asked to wait 30s" in child.logged()


def test_a_page_count_no_refresh_can_read_is_refused_at_the_first_page(tmp_path: Path) -> None:
    pages: list[str] = []

    def endless(request: FakeRequest) -> FakeResponse:
        pages.append(request.arg("page") or "")
        return json_response(
            200, {"teams": [], "total": 10**11, "page": 1, "page_size": 100, "total_pages": 10**9}
        )

    server = FakeServer(endless).start()
    key = tmp_path / "key"
    key.write_text(LITELLM_KEY, encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text(
        f'sources:\n  litellm: {{url: "{server.url}", api_key_file: "{key}", currency: EUR}}\n',
        "utf-8",
    )
    try:
        once = subprocess.run(
            [sys.executable, "-m", "exporter.cli", "--config.file", str(config), "--once"],
            capture_output=True,
            timeout=120,
            check=False,
        )
    finally:
        server.stop()
    print(f"requests to a paginator announcing 10^9 pages: {len(pages)}")
    assert once.returncode == 1
    assert pages == ["1"]
    errors = 'chargeback_source_errors_total{reason="too_large",source="litellm"} 1.0'
    assert errors in once.stdout.decode()


@pytest.fixture
def counted(stack: DemoStack) -> Iterator[tuple[FakeServer, list[str]]]:
    """The demo's OpenCost behind a server that counts the requests."""
    seen: list[str] = []

    def forward(request: FakeRequest) -> FakeResponse:
        seen.append(request.path)
        return stack.opencost.handle(request)

    server = FakeServer(forward).start()
    yield server, seen
    server.stop()


def _served(url: str, currency: str) -> str:
    return f'currency: {currency}\nsources:\n  opencost: {{url: "{url}", interval: 5m}}\n'


def test_a_burst_of_sighups_makes_one_reload(
    counted: tuple[FakeServer, list[str]], tmp_path: Path
) -> None:
    server, seen = counted
    config = tmp_path / "config.yaml"
    config.write_text(_served(server.url, "EUR"), encoding="utf-8")
    child = Exporter(config, tmp_path / "exporter.log")
    try:
        until("the first refresh", lambda: 'currency="EUR"' in child.metrics() and bool(seen))
        time.sleep(1)
        one_refresh = len(seen)
        config.write_text(_served(server.url, "USD"), encoding="utf-8")
        for _ in range(20):  # 20 in 2 s
            child.proc.send_signal(signal.SIGHUP)
            time.sleep(0.1)
        until("the reload", lambda: 'currency="USD"' in child.metrics())
        time.sleep(3)  # time for any further reload to show
        reloads = child.logged().count("reloaded ")
        requests = len(seen) - one_refresh
    finally:
        child.stop()
    print(f"20 SIGHUPs in 2 s: {reloads} reload(s), {requests} requests ({one_refresh} a refresh)")
    assert reloads == 1
    assert requests <= one_refresh


def test_a_config_path_that_became_a_fifo_is_refused_and_reloads_go_on(
    counted: tuple[FakeServer, list[str]], tmp_path: Path
) -> None:
    server, _ = counted
    config = tmp_path / "config.yaml"
    config.write_text(_served(server.url, "EUR"), encoding="utf-8")
    child = Exporter(config, tmp_path / "exporter.log")
    try:
        until("the first exposition", lambda: 'currency="EUR"' in child.metrics())
        config.unlink()
        os.mkfifo(config)
        child.proc.send_signal(signal.SIGHUP)
        until("the refused reload", lambda: "a FIFO, not a regular file" in child.logged())
        config.unlink()
        config.write_text(_served(server.url, "USD"), encoding="utf-8")
        child.proc.send_signal(signal.SIGHUP)
        until("the next reload", lambda: 'currency="USD"' in child.metrics())
    finally:
        child.stop()

"""The serving exporter as a process: SIGHUP reloads the config, SIGTERM stops it mid-refresh."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from chargeback_demo.stack import LITELLM_KEY, DemoStack
from tests.integration.process import PATIENCE, Exporter, until


def _config(stack: DemoStack, currency: str, interval: str = "5m") -> str:
    url = stack.urls["opencost"]
    return f'currency: {currency}\nsources:\n  opencost: {{url: "{url}", interval: {interval}}}\n'


@pytest.fixture
def exporter(stack: DemoStack, tmp_path: Path) -> Iterator[tuple[Exporter, Path]]:
    config = tmp_path / "config.yaml"
    config.write_text(_config(stack, "EUR"), encoding="utf-8")
    child = Exporter(config, tmp_path / "exporter.log")
    try:
        until("the first exposition", lambda: 'currency="EUR"' in child.metrics())
        yield child, config
    finally:
        child.stop()


def test_sighup_reloads_and_a_bad_config_keeps_the_running_one(
    exporter: tuple[Exporter, Path], stack: DemoStack
) -> None:
    child, config = exporter
    config.write_text(_config(stack, "USD"), encoding="utf-8")
    child.proc.send_signal(signal.SIGHUP)
    until("the reloaded currency", lambda: 'currency="USD"' in child.metrics())
    config.write_text(_config(stack, "dollars"), encoding="utf-8")
    child.proc.send_signal(signal.SIGHUP)
    until("the refused reload in the log", lambda: "reload refused" in child.logged())
    assert f"{config}:1: currency:" in child.logged()
    assert 'currency="USD"' in child.metrics()
    assert child.proc.poll() is None


def test_sigterm_exits_even_while_a_refresh_waits_on_a_slow_upstream(
    exporter: tuple[Exporter, Path], stack: DemoStack
) -> None:
    child, config = exporter
    stack.opencost.fault, stack.opencost.delay_seconds = "slow", PATIENCE * 2
    config.write_text(_config(stack, "EUR", interval="1s"), encoding="utf-8")
    child.proc.send_signal(signal.SIGHUP)
    # The reload's first refresh now hangs on OpenCost for longer than the test waits.
    until("a refresh stuck on OpenCost", lambda: "reloading the config" in child.logged())
    child.proc.send_signal(signal.SIGTERM)
    assert child.proc.wait(timeout=PATIENCE) == 0
    assert "shutting down" in child.logged()


def test_a_worker_that_cannot_start_turns_health_red(stack: DemoStack, tmp_path: Path) -> None:
    key = tmp_path / "litellm-key"
    key.write_text(LITELLM_KEY, encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text(
        _config(stack, "EUR")
        + f'  litellm: {{url: "{stack.urls["litellm"]}", api_key_file: "{key}", currency: EUR}}\n',
        encoding="utf-8",
    )
    child = Exporter(config, tmp_path / "exporter.log")
    try:
        until("a working worker", lambda: "chargeback_worker_up 1.0" in child.metrics())
        assert child.get("/healthz") == (200, "ok\n")
        # The Secret goes away after start: every new worker fails as it reads the key.
        key.unlink()
        key.mkdir()
        os.kill(child.worker(), signal.SIGKILL)
        until("/healthz to fail", lambda: child.get("/healthz")[0] == 503)
        _, words = child.get("/healthz")
        assert "the refresh worker cannot start" in words
        until("a second restart", lambda: "chargeback_worker_restarts_total 2.0" in child.metrics())
        assert "chargeback_worker_up 0.0" in child.metrics()
        assert child.proc.poll() is None
    finally:
        child.stop()
    assert "exited before it started" in child.logged()

"""The serving exporter as a process: SIGHUP reloads the config, SIGTERM stops it mid-refresh."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chargeback_demo.prometheus import free_port
from chargeback_demo.stack import DemoStack

# Liveness bounds, not performance figures: generous so a loaded machine cannot trip them.
PATIENCE = 30.0


def _config(stack: DemoStack, currency: str, interval: str = "5m") -> str:
    url = stack.urls["opencost"]
    return f'currency: {currency}\nsources:\n  opencost: {{url: "{url}", interval: {interval}}}\n'


def _until(what: str, check: Callable[[], bool]) -> None:
    end = time.monotonic() + PATIENCE
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


class _Exporter:
    """The real command line in a child process, serving on a free loopback port."""

    def __init__(self, config: Path, log: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}/metrics"
        self.log = log
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "exporter.cli",
                    "--config.file",
                    str(config),
                    "--web.listen-address",
                    self.url.removeprefix("http://").removesuffix("/metrics"),
                ],
                stdout=out,
                stderr=out,
            )

    def metrics(self) -> str:
        try:
            with urllib.request.urlopen(self.url, timeout=5) as resp:
                body: bytes = resp.read()
                return body.decode()
        except OSError:
            return ""

    def logged(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@pytest.fixture
def exporter(stack: DemoStack, tmp_path: Path) -> Iterator[tuple[_Exporter, Path]]:
    config = tmp_path / "config.yaml"
    config.write_text(_config(stack, "EUR"), encoding="utf-8")
    child = _Exporter(config, tmp_path / "exporter.log")
    try:
        _until("the first exposition", lambda: 'currency="EUR"' in child.metrics())
        yield child, config
    finally:
        child.proc.kill()
        child.proc.wait()


def test_sighup_reloads_and_a_bad_config_keeps_the_running_one(
    exporter: tuple[_Exporter, Path], stack: DemoStack
) -> None:
    child, config = exporter
    config.write_text(_config(stack, "USD"), encoding="utf-8")
    child.proc.send_signal(signal.SIGHUP)
    _until("the reloaded currency", lambda: 'currency="USD"' in child.metrics())
    config.write_text(_config(stack, "dollars"), encoding="utf-8")
    child.proc.send_signal(signal.SIGHUP)
    _until("the refused reload in the log", lambda: "reload refused" in child.logged())
    assert f"{config}:1: currency:" in child.logged()
    assert 'currency="USD"' in child.metrics()
    assert child.proc.poll() is None


def test_sigterm_exits_even_while_a_refresh_waits_on_a_slow_upstream(
    exporter: tuple[_Exporter, Path], stack: DemoStack
) -> None:
    child, config = exporter
    stack.opencost.fault, stack.opencost.delay_seconds = "slow", PATIENCE * 2
    config.write_text(_config(stack, "EUR", interval="1s"), encoding="utf-8")
    child.proc.send_signal(signal.SIGHUP)
    # The reload's first refresh now hangs on OpenCost for longer than the test waits.
    _until("a refresh stuck on OpenCost", lambda: "reloading the config" in child.logged())
    child.proc.send_signal(signal.SIGTERM)
    assert child.proc.wait(timeout=PATIENCE) == 0
    assert "shutting down" in child.logged()

"""The real command line in a child process on a free loopback port, for the tests that need one.

It runs on the machine's clock: a test module that uses it is among those .ci/run runs again
under faketime (tests/tooling/test_kinds.py checks that).
"""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from chargeback_demo.prometheus import free_port
from tests.support.waiting import PATIENCE, until

__all__ = ["PATIENCE", "Exporter", "peak_rss_mib", "until"]


class Exporter:
    """`python -m exporter.cli --config.file CONFIG` serving on a free loopback port."""

    def __init__(
        self, config: Path, log: Path, args: Sequence[str] = (), host: str = "127.0.0.1"
    ) -> None:
        self.port = free_port()
        listen = f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"
        self.base = f"http://{listen}"
        self.url = f"{self.base}/metrics"
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
                    listen,
                    *args,
                ],
                stdout=out,
                stderr=out,
            )

    def get(self, path: str = "/metrics", timeout: float = 5) -> tuple[int, str]:
        """Status and body of a GET, (0, "") when nothing answers."""
        try:
            with urllib.request.urlopen(f"{self.base}{path}", timeout=timeout) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError:
            return 0, ""

    def metrics(self) -> str:
        """The exposition, or "" when nothing answers."""
        status, body = self.get()
        return body if status == 200 else ""

    def logged(self) -> str:
        """Everything the process wrote so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def children(self) -> list[int]:
        """Process ids of its children (the refresh worker among them)."""
        found: list[int] = []
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            found += [int(p) for p in (task / "children").read_text().split()]
        return found

    def worker(self) -> int:
        """The refresh worker's process id (the child started with multiprocessing's spawn)."""
        for pid in self.children():
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"multiprocessing" in command and b"resource_tracker" not in command:
                return pid
        raise LookupError("no refresh worker running")

    def stop(self) -> None:
        """Kill it (and wait), whatever state it is in."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def peak_rss_mib(pid: int) -> float:
    """The most memory a process has had resident (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise LookupError(f"no VmHWM for {pid}")

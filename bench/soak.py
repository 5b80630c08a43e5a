"""Soak: the real exporter under continuous scraping while its upstreams flap.

    python -m bench.soak [--minutes 10] [--clients 4]     # or: make soak

The demo's fakes sit behind fault-injecting proxies; every few seconds one source switches to
a random fault or heals. Several clients scrape /metrics back to back. Each minute prints the
exporter's resident memory and the scrape latency percentiles, so growth over time and stalls
while refreshes run show side by side. Measured, never asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from chargeback_demo.faultproxy import FAULTS, FaultProxy
from chargeback_demo.prometheus import free_port
from chargeback_demo.stack import DemoStack, demo_config_dict

SOURCES = ("opencost", "dcgm", "kueue", "litellm")
# Faults that end by themselves within a refresh's timeout; `drip` and `slow` hold a thread.
# `edit` is a test's own rewrite: without one it passes everything through.
FLAPS = tuple(f for f in FAULTS if f not in ("overlap", "short", "edit"))


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _config(stack: DemoStack, proxies: dict[str, FaultProxy]) -> dict[str, Any]:
    data = demo_config_dict({n: p.url for n, p in proxies.items()}, str(stack.secrets))
    for name in SOURCES:
        data["sources"][name].update({"interval": "5s", "timeout": "2s"})
    return data


class _Scrapes:
    """Latencies of every scrape, by minute; failures counted apart."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.failures = 0

    def take(self) -> tuple[list[float], int]:
        with self.lock:
            out, failed = self.latencies, self.failures
            self.latencies, self.failures = [], 0
        return out, failed


def _scrape(url: str, scrapes: _Scrapes, stop: threading.Event) -> None:
    with httpx.Client(timeout=30) as client:
        while not stop.is_set():
            start = time.perf_counter()
            try:
                client.get(url).raise_for_status()
            except httpx.HTTPError:
                with scrapes.lock:
                    scrapes.failures += 1
                continue
            with scrapes.lock:
                scrapes.latencies.append(time.perf_counter() - start)


def _flap(proxies: dict[str, FaultProxy], rnd: random.Random, stop: threading.Event) -> None:
    while not stop.wait(3.0):
        proxy = proxies[rnd.choice(SOURCES)]
        proxy.set("" if proxy.fault else rnd.choice(FLAPS))


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] * 1000


def main(argv: list[str] | None = None) -> int:
    """Run the soak and print one line per minute."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--minutes", type=float, default=10.0, help="how long to run (default: %(default)g)"
    )
    parser.add_argument(
        "--clients",
        type=int,
        default=4,
        help="scrapers fetching /metrics back to back (default: %(default)d)",
    )
    args = parser.parse_args(argv)
    stack = DemoStack().start()
    proxies = {n: FaultProxy(stack.urls[n], delay=0.2).start() for n in SOURCES}
    work = Path(tempfile.mkdtemp(prefix="chargeback-soak-"))
    config = work / "config.yaml"
    config.write_text(yaml.safe_dump(_config(stack, proxies)), encoding="utf-8")
    port = free_port()
    cmd = [sys.executable, "-m", "exporter.cli", "--config.file", str(config)]
    cmd += ["--web.listen-address", f"127.0.0.1:{port}", "--log.level", "error"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/metrics"
    stop, scrapes = threading.Event(), _Scrapes()
    try:
        time.sleep(3.0)
        threads = [
            threading.Thread(target=_scrape, args=(url, scrapes, stop), daemon=True)
            for _ in range(args.clients)
        ]
        threads.append(
            threading.Thread(target=_flap, args=(proxies, random.Random(7), stop), daemon=True)
        )
        for t in threads:
            t.start()
        print(f"soak: {args.clients} clients, upstreams flapping every 3 s, {args.minutes} min")
        print("minute  rss_MiB  scrapes  failed  p50_ms  p99_ms  max_ms")
        start_rss = _rss_mib(proc.pid)
        for minute in range(1, int(args.minutes) + 1):
            time.sleep(60.0)
            lat, failed = scrapes.take()
            print(
                f"{minute:>6}  {_rss_mib(proc.pid):7.1f}  {len(lat):7d}  {failed:6d}  "
                f"{_percentile(lat, 50):6.1f}  {_percentile(lat, 99):6.1f}  "
                f"{max(lat, default=float('nan')) * 1000:6.1f}",
                flush=True,
            )
        growth = _rss_mib(proc.pid) - start_rss
        print(f"memory growth over the run: {growth:+.1f} MiB")
    finally:
        stop.set()
        proc.terminate()
        proc.wait(timeout=30)
        for proxy in proxies.values():
            proxy.set("")
            proxy.stop()
        stack.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

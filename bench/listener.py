"""The serving process under idle, trickling and failing clients: scrape latencies, side by side.

    python -m bench.listener [runs]

The figures tests/integration/test_listener.py used to assert, measured here instead, since a
busy machine moves them: scrape latency alone, with 64 idle and 16 trickling connections open,
with 2,000 idle ones, and while 1,000 wrong passwords (bcrypt cost 10) arrive 64 at a time
(from a process of its own, so this interpreter's lock does not slow the scrapes it times);
then the median answer to an unknown user beside a wrong password's at cost 12, whose ratio
should be near 1 (the unit tests check the decoy hash that makes it so).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import bcrypt
import httpx

from chargeback_demo.prometheus import free_port
from chargeback_demo.stack import DemoStack

PASSWORD = "scrape-me"
FLOOD = (sys.executable, "-m", "chargeback_demo.flood")  # PORT TOTAL AT_ONCE AUTH


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@contextlib.contextmanager
def _exporter(stack: DemoStack, folder: Path, web: str = "") -> Iterator[str]:
    """The exporter's command line on a free port, serving OpenCost; yields its /metrics URL."""
    config = folder / "config.yaml"
    url = stack.urls["opencost"]
    config.write_text(f'sources:\n  opencost: {{url: "{url}", interval: 5m}}\n', encoding="utf-8")
    listen = f"127.0.0.1:{free_port()}"
    args = [sys.executable, "-m", "exporter.cli", "--config.file", str(config)]
    args += ["--web.listen-address", listen]
    if web:
        (folder / "web.yml").write_text(web, encoding="utf-8")
        args += ["--web.config.file", str(folder / "web.yml")]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    metrics = f"http://{listen}/metrics"
    try:
        end = time.monotonic() + 60
        while not _serves(metrics) and time.monotonic() < end:
            time.sleep(0.1)
        yield metrics
    finally:
        proc.kill()
        proc.wait()


def _serves(url: str) -> bool:
    try:
        response = httpx.get(url, auth=("prometheus", PASSWORD), timeout=5)
    except httpx.TransportError:
        return False
    return response.status_code == 200 and b"chargeback_source_up" in response.content


def _timed(call: Callable[[], object]) -> float:
    started = time.monotonic()
    call()
    return time.monotonic() - started


def _ms(seconds: list[float]) -> str:
    median = statistics.median(seconds)
    return f"median {median * 1000:6.1f} ms, max {max(seconds) * 1000:6.1f} ms"


def _open_connections(port: int, count: int) -> list[socket.socket]:
    return [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]


def _idle(url: str, runs: int) -> None:
    port = httpx.URL(url).port or 80
    alone = [_timed(lambda: httpx.get(url, timeout=30)) for _ in range(runs)]
    print(f"scrape alone:                       {_ms(alone)}", flush=True)
    idle, trickling = _open_connections(port, 64), _open_connections(port, 16)
    stop = threading.Event()

    def trickle() -> None:
        # A byte a second from each: every read is in time, the request never completes.
        for byte in b"GET /metrics HTTP/1.1\r\nHost: x\r\n" * 10:
            for sock in trickling:
                with contextlib.suppress(OSError):
                    sock.send(bytes([byte]))
            if stop.wait(1.0):
                return

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        time.sleep(1.5)  # every connection is open and the trickle has begun
        busy = [_timed(lambda: httpx.get(url, timeout=30)) for _ in range(runs)]
    finally:
        stop.set()
        for sock in idle + trickling:
            sock.close()
    print(f"scrape with 64 idle + 16 trickling: {_ms(busy)}", flush=True)
    idle = _open_connections(port, 2000)
    try:
        crowded = [_timed(lambda: httpx.get(url, timeout=30)) for _ in range(runs)]
    finally:
        for sock in idle:
            sock.close()
    print(f"scrape with 2,000 idle:             {_ms(crowded)}", flush=True)


def _flood(url: str) -> None:
    port = httpx.URL(url).port or 80
    flood = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "chargeback_demo.flood",
            str(port),
            "1000",
            "64",
            _basic("prometheus", "no"),
        ],
        stdout=subprocess.PIPE,
    )
    # Open loop: a scrape starts every 50 ms whatever the earlier ones are doing, so a stall
    # shows in every scrape it holds up, not in one slow sample.
    seconds: list[float] = []
    scrapes: list[threading.Thread] = []
    with httpx.Client(auth=("prometheus", PASSWORD), timeout=60) as client:

        def scrape() -> None:
            started = time.monotonic()
            if client.get(url).status_code == 200:
                seconds.append(time.monotonic() - started)

        flood_started = time.monotonic()
        while flood.poll() is None:
            scrapes.append(threading.Thread(target=scrape, daemon=True))
            scrapes[-1].start()
            time.sleep(0.05)
        flood_seconds = time.monotonic() - flood_started
        for thread in scrapes:
            thread.join(60)
    out, _ = flood.communicate()
    statuses = json.loads(out)["statuses"]
    p90 = statistics.quantiles(seconds, n=10)[-1] if len(seconds) > 1 else seconds[0]
    print(
        f"scrape during 1,000 wrong passwords: {_ms(seconds)}, p90 {p90 * 1000:.1f} ms "
        f"({len(seconds)} scrapes, flood {flood_seconds:.1f} s, statuses {statuses})",
        flush=True,
    )


def _unknown_user(url: str, runs: int) -> None:
    timings: dict[str, list[float]] = {"wrong password": [], "unknown user": []}

    def login(user: str) -> Callable[[], object]:
        return lambda: httpx.get(url, auth=(user, "guess"))

    for _ in range(runs):
        for what, user in (("wrong password", "prometheus"), ("unknown user", "mallory")):
            timings[what].append(_timed(login(user)))
    wrong, unknown = (statistics.median(t) for t in timings.values())
    print(
        f"cost 12: wrong password {wrong * 1000:.0f} ms, unknown user {unknown * 1000:.0f} ms, "
        f"ratio {unknown / wrong:.2f}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> None:
    """Start the demo's fakes and the exporter, and print each figure."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.listener",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("runs", type=int, nargs="?", default=5)
    runs = parser.parse_args(argv).runs
    stack = DemoStack().start()
    try:
        with tempfile.TemporaryDirectory(prefix="chargeback-listener-") as tmp:
            folder = Path(tmp)
            with _exporter(stack, folder) as url:
                _idle(url, runs)
            for cost, measure in ((10, _flood), (12, lambda u: _unknown_user(u, runs))):
                hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(cost)).decode()
                web = f"basic_auth_users:\n  prometheus: '{hashed}'\n"
                with _exporter(stack, folder, web) as url:
                    measure(url)
    finally:
        stack.stop()


if __name__ == "__main__":
    main()

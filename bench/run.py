"""Benchmarks, measured side by side and printed as ratios (never asserted by tests).

    python -m bench.run            # or: make bench

1. An HTTP scrape that sends cached bytes versus one that would join and render at scrape time.
2. The join (attribution + chargeback) as the cluster grows: cost per allocation should stay flat.
3. Parsing an OpenCost body versus the JSON decode alone (what our validation adds).
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial

import httpx

from exporter.attribution import Attributor
from exporter.config import Config
from exporter.exposition import Exposition, render
from exporter.join import join
from exporter.server import MetricsServer
from exporter.sources.opencost import AllocationSet, OpenCostSnapshot, parse_allocation_response
from exporter.sources.table import Records

NOW = datetime(2026, 11, 15, 12, tzinfo=UTC)


def _best(fn: Callable[[], object], repeat: int = 5) -> float:
    """Best of `repeat` runs, in seconds: the least disturbed measurement."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _body(n: int, teams: int = 40) -> dict[str, object]:
    rnd = random.Random(n)
    data: dict[str, object] = {}
    for i in range(n):
        name = f"node-{i % 50}/ns-{i % 300}/deployment:app-{i}"
        data[name] = {
            "name": name,
            "properties": {
                "node": f"node-{i % 50}",
                "namespace": f"ns-{i % 300}",
                "controller": f"deployment:app-{i}",
                "labels": {"team": f"team-{rnd.randrange(teams)}", "app": f"app-{i}"},
            },
            "gpuCost": rnd.random() * 10,
            "cpuCost": rnd.random(),
            "ramCost": rnd.random(),
            "pvCost": rnd.random() / 10,
            "networkCost": 0.01,
            "gpuHours": rnd.random() * 7,
        }
    data["__idle__"] = {"name": "__idle__", "gpuCost": 100.0, "cpuCost": 10.0, "ramCost": 5.0}
    return {"code": 200, "data": [data]}


def _snapshot(n: int) -> OpenCostSnapshot:
    allocations, idle = parse_allocation_response(_body(n))
    window = AllocationSet(NOW - timedelta(hours=1), NOW, allocations, idle)
    return OpenCostSnapshot(window, window)


def _scrape_seconds(exposition: Callable[[], Exposition], scrapes: int = 20) -> float:
    """Median time of a real HTTP scrape of a server that serves `exposition()`."""
    server = MetricsServer(("127.0.0.1", 0), "/metrics", exposition)
    server.start()
    times = []
    with httpx.Client() as client:
        for _ in range(scrapes):
            start = time.perf_counter()
            client.get(f"http://127.0.0.1:{server.port}/metrics").raise_for_status()
            times.append(time.perf_counter() - start)
    server.stop()
    return statistics.median(times)


def main() -> None:
    """Run every benchmark and print a table of ratios."""
    config = Config.model_validate({"teams": [{"name": f"team-{i}"} for i in range(20)]})
    attributor = Attributor(config)

    snap = _snapshot(5000)
    exposition = render(join(config, attributor, Records(opencost=snap), NOW).samples)
    cached = _scrape_seconds(lambda: exposition)
    at_scrape = _scrape_seconds(
        lambda: render(join(config, attributor, Records(opencost=snap), NOW).samples)
    )
    print(f"1. one HTTP scrape over loopback, 5,000 allocations ({len(exposition.text):,} bytes)")
    print(f"   cached bytes (ours)  {cached * 1e3:8.2f} ms")
    print(f"   join + render        {at_scrape * 1e3:8.2f} ms   ratio {at_scrape / cached:,.0f}x")

    print("2. join cost per allocation as the cluster grows")
    base = None
    for n in (500, 5000, 20000):
        records = Records(opencost=_snapshot(n))
        per = _best(partial(join, config, attributor, records, NOW), 3) / n
        base = base or per
        print(f"   {n:>6} allocations  {per * 1e6:8.2f} us each   ratio to 500: {per / base:.2f}")

    body = _body(20000)
    text = json.dumps(body)
    decode = _best(lambda: json.loads(text), 3)
    parse = _best(lambda: parse_allocation_response(json.loads(text)), 3)
    print("3. OpenCost body, 20,000 allocations")
    print(f"   json decode          {decode * 1e3:8.1f} ms")
    print(f"   decode + validate    {parse * 1e3:8.1f} ms   ratio {parse / decode:.2f}x")


if __name__ == "__main__":
    main()

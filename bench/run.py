"""Benchmarks over a synthetic cluster, measured in child processes and printed as medians.

    make bench                        # sizes S and M, 3 runs each
    BENCH_SIZES=S,M,L make bench      # L too (its first generation takes about ten minutes)
    BENCH_SIZES=S,M,L,XL make bench   # XL too (50,000 GPUs; generated on request, an hour)
    BENCH_RUNS=5 BENCH_SCRAPE_SECONDS=30 BENCH_CACHE=/var/tmp/bench make bench

1. Refresh CPU-s and peak RSS per source and in total: cold (a fresh process's first refresh)
   and steady (its second, so closed-day caches count); DCGM also through the Prometheus
   that scrapes it (`dcgm-prom`: a few queries instead of one call per node).
2. Scrape p50/p99 with 4 concurrent scrapers while refreshes run, plain and gzip: the
   exporter (refresh in a worker process), the same refresh in the serving process (before),
   a naive prometheus-client exporter that joins on every scrape, and a static server sending
   the same bytes (the floor).
3. The OpenCost path beside `unalloc` (its own virtual environment) on one /allocation body.
4. Growth: the totals of every size run, per 1,000 GPUs, so linear growth shows as flat.

Measured, never asserted: the figures depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from bench import peer
from bench.servers import Upstreams
from bench.synthetic import SIZES, Size
from chargeback_demo.prometheus import free_port

SOURCES = ("opencost", "dcgm", "kueue", "litellm")
# Rows of the refresh table: each source alone, DCGM through Prometheus, then all together.
ROWS: tuple[str | None, ...] = (*SOURCES, "dcgm-prometheus", None)
LABELS = {"dcgm-prometheus": "dcgm-prom", None: "total"}
SCRAPERS = 4
MODES = ("static", "worker", "inprocess", "naive")
ENVIRONMENT = """environment (settings, all optional):
  BENCH_SIZES           sizes to run, comma-separated, of S, M, L and XL (default S,M)
  BENCH_RUNS            fresh processes per refresh figure, whose median prints (default 3)
  BENCH_SCRAPE_SECONDS  seconds of scraping per way of serving and encoding (default 20)
  BENCH_CACHE           where generated upstream bodies are kept between runs
                        (default $TMPDIR/chargeback-bench)"""


def _child(*args: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.child", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    if not figures["ok"]:
        # A refresh that failed measured an error path, not the work: no figure is printed.
        raise SystemExit(f"bench.child {' '.join(args)}: a refresh failed\n{out.stderr}")
    return figures


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def refresh_table(upstreams: Upstreams, work: Path, runs: int) -> dict[str, float]:
    """Table 1: per source and all together, medians of `runs` fresh processes; returns the
    total's medians."""
    print(f"\n1. refresh, size {upstreams.size.name} (median of {runs} fresh processes)")
    print(f"   {'source':<9} {'cold CPU-s':>10} {'steady CPU-s':>12} {'peak RSS MiB':>12}")
    total: dict[str, float] = {}
    for only in ROWS:
        config = upstreams.write_config(work / f"{only or 'all'}.json", only)
        results = [_child("refresh", str(config)) for _ in range(runs)]
        total = {k: _median(results, k) for k in ("cold", "steady", "rss")}
        name = LABELS.get(only, only)
        print(f"   {name:<9} {total['cold']:>10.2f} {total['steady']:>12.2f} {total['rss']:>12.0f}")
    return total


class _Scrapes:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.failures = 0
        self.lock = threading.Lock()


def _scrape(url: str, gzip: bool, until: float, scrapes: _Scrapes) -> None:
    headers = {"Accept-Encoding": "gzip" if gzip else "identity"}
    with httpx.Client(timeout=120, headers=headers) as client:
        while time.monotonic() < until:
            start = time.perf_counter()
            try:
                client.get(url).raise_for_status()
            except httpx.HTTPError:
                with scrapes.lock:
                    scrapes.failures += 1
                continue
            with scrapes.lock:
                scrapes.latencies.append(time.perf_counter() - start)


def _percentiles(url: str, gzip: bool, seconds: float) -> tuple[float, float, int]:
    scrapes, until = _Scrapes(), time.monotonic() + seconds
    threads = [
        threading.Thread(target=_scrape, args=(url, gzip, until, scrapes)) for _ in range(SCRAPERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cuts = statistics.quantiles(scrapes.latencies, n=100) if len(scrapes.latencies) > 1 else [0.0]
    p50, p99 = statistics.median(scrapes.latencies or [0.0]), cuts[-1]
    return p50, p99, len(scrapes.latencies)


def _wait(url: str, ready: Callable[[bytes], bool]) -> bytes:
    end = time.monotonic() + 1800
    while time.monotonic() < end:
        try:
            body = httpx.get(url, timeout=60, headers={"Accept-Encoding": "identity"}).content
        except httpx.HTTPError:
            body = b""
        if ready(body):
            return body
        time.sleep(0.5)
    raise SystemExit(f"{url} never became ready")


def scrape_table(upstreams: Upstreams, work: Path, seconds: float) -> dict[str, float]:
    """Table 2: scrape latency while refreshes run, per way of serving, plain and gzip;
    returns the worker's p99 over the floor, plain and gzip."""
    config = upstreams.write_config(work / "scrape.json")
    print(
        f"\n2. scrapes, size {upstreams.size.name}: {SCRAPERS} scrapers for {seconds:g} s each, "
        "sources refreshing every 5 s"
    )
    heads = ("p50 ms", "p99 ms", "scrapes", "p99/floor")
    print(f"   {'serving':<10} {'gzip':<5} " + " ".join(f"{h:>9}" for h in heads))
    floor: dict[bool, float] = {}
    worker: dict[str, float] = {}
    for mode in MODES:
        port = free_port()
        url = f"http://127.0.0.1:{port}/metrics"
        if mode == "static":
            args = ["static", str(work / "exposition.prom"), str(port)]
        else:
            args = ["serve", str(config), str(port), mode]
        proc = subprocess.Popen([sys.executable, "-m", "bench.child", *args])
        try:
            _wait(url, lambda b: b"chargeback_team_cost_month_to_date" in b)
            for gzip in (False, True):
                p50, p99, count = _percentiles(url, gzip, seconds)
                floor.setdefault(gzip, p99)
                ratio = p99 / floor[gzip] if floor[gzip] else float("nan")
                if mode == "worker":
                    worker["gzip" if gzip else "plain"] = ratio
                print(
                    f"   {mode:<10} {'yes' if gzip else 'no':<5} {p50 * 1e3:>9.1f} "
                    f"{p99 * 1e3:>9.1f} {count:>8} {ratio:>8.1f}x"
                )
        finally:
            proc.terminate()
            proc.wait()
    return worker


def growth_table(rows: list[tuple[Size, dict[str, float]]]) -> None:
    """Table 4: each size's totals, and per 1,000 GPUs (flat when growth is linear)."""
    print("\n4. growth: the total refresh at each size, and per 1,000 GPUs")
    heads = ("cold s", "/1k GPU", "steady s", "/1k GPU", "RSS MiB", "/1k GPU", "p99 plain", "gzip")
    print(f"   {'size':<4} {'GPUs':>7} " + " ".join(f"{h:>9}" for h in heads))
    for size, got in rows:
        per = 1000 / size.gpus
        figures = (
            f"{got['cold']:>9.2f}",
            f"{got['cold'] * per:>9.3f}",
            f"{got['steady']:>9.2f}",
            f"{got['steady'] * per:>9.3f}",
            f"{got['rss']:>9.0f}",
            f"{got['rss'] * per:>9.1f}",
            f"{got['plain']:>8.1f}x",
            f"{got['gzip']:>8.1f}x",
        )
        print(f"   {size.name:<4} {size.gpus:>7,} " + " ".join(figures))


def main(argv: list[str] | None = None) -> None:
    """Every table at every size asked for."""
    argparse.ArgumentParser(
        prog="python -m bench.run",
        description=__doc__,
        epilog=ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    ).parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    sizes = [SIZES[s.strip()] for s in os.environ.get("BENCH_SIZES", "S,M").split(",")]
    runs = int(os.environ.get("BENCH_RUNS", "3"))
    seconds = float(os.environ.get("BENCH_SCRAPE_SECONDS", "20"))
    cache = Path(os.environ.get("BENCH_CACHE", Path(tempfile.gettempdir()) / "chargeback-bench"))
    print(f"bench: sizes {','.join(s.name for s in sizes)}, {runs} runs, cache {cache}")
    grown = [(size, _size(size, cache, runs, seconds)) for size in sizes]
    # The peer is compared on L's OpenCost body at most: XL's is the same shape, five times over.
    peers = [s for s in sizes if s.name != "XL"] or sizes
    peer.compare(cache, max(peers, key=lambda s: s.workloads), runs)
    growth_table(grown)


def _size(size: Size, cache: Path, runs: int, seconds: float) -> dict[str, float]:
    print(
        f"\n== size {size.name}: {size.gpus:,} GPUs, {size.workloads:,} workloads, "
        f"{size.teams:,} teams, LiteLLM {size.llm_teams:,} x {size.llm_models} x 31 days"
    )
    upstreams = Upstreams(size, cache).start()
    with tempfile.TemporaryDirectory(prefix="chargeback-bench-") as tmp:
        work = Path(tmp)
        started = time.monotonic()
        # The first refresh fills the upstream cache; later ones only send its bytes. Its
        # calls may wait as long as the generator takes (minutes for LiteLLM at L).
        warm = upstreams.write_config(work / "warm.json", warm=True)
        _child("refresh", str(warm), str(work / "exposition.prom"))
        prometheus = upstreams.write_config(work / "warm-prom.json", "dcgm-prometheus", warm=True)
        _child("refresh", str(prometheus))
        took = time.monotonic() - started
        print(f"   upstream bodies ready (generated, or read from the cache) in {took:.0f} s")
        total = refresh_table(upstreams, work, runs)
        total.update(scrape_table(upstreams, work, seconds))
    upstreams.stop()
    return total


if __name__ == "__main__":
    main()

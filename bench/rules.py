"""The shipped rules' cost in a real Prometheus: each group's evaluation time, sizes side by side.

    python -m bench.rules                              # sizes M and L
    BENCH_RULE_SIZES=S,M python -m bench.rules
    BENCH_RULE_INTERVAL=10s BENCH_RULE_CYCLES=5 python -m bench.rules

Per size: the exporter's exposition of the synthetic cluster (one refresh in a child process,
upstream bodies cached under BENCH_CACHE as `bench.run` caches them) is served as fixed bytes
from loopback; a Prometheus (the installed binary) on a temporary directory scrapes it and
evaluates the shipped rule files (rules/) every interval. Once the first scrape has landed, the
bench reads Prometheus's own /metrics several times an interval until every group has evaluated
CYCLES more times, then prints each group's last and mean evaluation duration, its interval and
their ratio, the samples it wrote, the series scraped, the rule-produced series, and
Prometheus's head series and RSS, then each size's slowest rules.

The Prometheus holds minutes of history, not weeks: rules over long ranges ([3h], [7d:1h],
[31d:1800s]) read what is there, so their cost here is a floor for a long-running server.
Measured, never asserted: the figures depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from bench.rule_figures import (
    SelfMetrics,
    SizeFigures,
    Tracker,
    parse_self_metrics,
    side_by_side,
    slowest_lines,
    slowest_rules,
    vector_sum,
)
from bench.servers import Upstreams
from bench.synthetic import SIZES, Size
from chargeback_demo.prometheus import DEFAULT_JOB, free_port, start_prometheus, stop, wait_ready
from chargeback_mixin.generate import ALERTS_FILE, RULES_FILE

ROOT = Path(__file__).resolve().parents[1]
# Every rule file the project ships, as a user's Prometheus loads them.
RULE_FILES = (ROOT / RULES_FILE, ROOT / ALERTS_FILE)
# Recording rules are named level:metric:operations; alerting rules write ALERTS.
RULE_SERIES = 'count({__name__=~".+:.+|ALERTS"})'
UP = f'up{{job="{DEFAULT_JOB}"}}'
# Patience for one scrape of L's exposition, or one batch of evaluations, on a loaded machine.
PATIENCE = 600.0
ENVIRONMENT = """environment (settings, all optional):
  BENCH_RULE_SIZES     sizes to compare, comma-separated, of S, M, L and XL (default M,L)
  BENCH_RULE_INTERVAL  Prometheus's scrape and evaluation interval, in seconds (default 10s)
  BENCH_RULE_CYCLES    evaluations of every group to measure after the first scrape (default 5)
  BENCH_CACHE          where generated upstream bodies are kept between runs
                       (default $TMPDIR/chargeback-bench)"""


def exposition(size: Size, cache: Path, out: Path) -> Path:
    """The exporter's exposition of the synthetic cluster, from one refresh in a child process."""
    upstreams = Upstreams(size, cache).start()
    try:
        config = upstreams.write_config(out.with_suffix(".json"), warm=True)
        subprocess.run(
            [sys.executable, "-m", "bench.child", "refresh", str(config), str(out)],
            check=True,
            capture_output=True,
        )
    finally:
        upstreams.stop()
    return out


def _poll(what: str, check: Callable[[], bool], tick: float) -> None:
    end = time.monotonic() + PATIENCE
    while not check():
        if time.monotonic() > end:
            raise SystemExit(f"bench.rules: gave up waiting for {what}")
        time.sleep(tick)


class _Prometheus:
    """The HTTP API and own metrics of one running Prometheus."""

    def __init__(self, url: str) -> None:
        self.client = httpx.Client(base_url=url, timeout=60)

    def own(self) -> SelfMetrics:
        return parse_self_metrics(self.client.get("/metrics").raise_for_status().text)

    def query(self, promql: str) -> float:
        answer = self.client.get("/api/v1/query", params={"query": promql})
        return vector_sum(answer.json())


def measure(prom: _Prometheus, seconds: float, cycles: int) -> SizeFigures:
    """Wait for the first scrape, then for `cycles` evaluations of every group."""
    # A failed scrape still counts the samples it read: only `up` says one landed.
    _poll("the first scrape", lambda: prom.query(UP) == 1, seconds / 4)
    tracker = Tracker(prom.own())

    def evaluated() -> bool:
        tracker.observe(prom.own())
        return tracker.cycles() >= cycles

    _poll(f"{cycles} evaluations of every rule group", evaluated, seconds / 8)
    figures = SizeFigures.of(
        tracker,
        prom.own(),
        slowest_rules(prom.client.get("/api/v1/rules").json()),
        scraped_series=prom.query(f'scrape_samples_scraped{{job="{DEFAULT_JOB}"}}'),
        scrape_seconds=prom.query(f'scrape_duration_seconds{{job="{DEFAULT_JOB}"}}'),
        rule_series=prom.query(RULE_SERIES),
    )
    # Rules timed over a failed scrape, or writing nothing, would measure an empty database.
    if prom.query(UP) != 1 or not figures.rule_series > 0:
        raise SystemExit("bench.rules: a scrape failed or the rules wrote nothing; no figure")
    return figures


def run_size(size: Size, cache: Path, interval: str, cycles: int) -> SizeFigures:
    """One size: render, serve, scrape and evaluate, measure, stop."""
    seconds = float(interval.rstrip("s"))
    with tempfile.TemporaryDirectory(prefix="chargeback-rules-") as tmp:
        work = Path(tmp)
        body = exposition(size, cache, work / "exposition.prom")
        port = free_port()
        static = subprocess.Popen(
            [sys.executable, "-m", "bench.child", "static", str(body), str(port)]
        )
        proc, url = start_prometheus(
            work / "prometheus",
            targets=[f"127.0.0.1:{port}"],
            rule_files=RULE_FILES,
            interval=interval,
        )
        prom = _Prometheus(url)
        try:
            wait_ready(proc, f"{url}/-/ready", timeout=PATIENCE)
            return measure(prom, seconds, cycles)
        finally:
            prom.client.close()
            stop(proc)
            static.terminate()
            static.wait()


def main(argv: list[str] | None = None) -> None:
    """Every size asked for, then one table with a column per size."""
    argparse.ArgumentParser(
        prog="python -m bench.rules",
        description=__doc__,
        epilog=ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    ).parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    sizes = [SIZES[s.strip()] for s in os.environ.get("BENCH_RULE_SIZES", "M,L").split(",")]
    interval = os.environ.get("BENCH_RULE_INTERVAL", "10s")
    cycles = int(os.environ.get("BENCH_RULE_CYCLES", "5"))
    cache = Path(os.environ.get("BENCH_CACHE", Path(tempfile.gettempdir()) / "chargeback-bench"))
    print(f"\nrules: sizes {','.join(s.name for s in sizes)}, every {interval}, {cycles} cycles")
    figures: dict[str, SizeFigures] = {}
    for size in sizes:
        started = time.monotonic()
        figures[size.name] = run_size(size, cache, interval, cycles)
        print(f"   size {size.name} measured in {time.monotonic() - started:.0f} s")
    print("\n5. the shipped rules in a real Prometheus (mean/interval: the target is under 0.1)")
    for line in side_by_side(figures):
        print(line)
    print("\n   the slowest rules, last evaluation:")
    for line in slowest_lines(figures):
        print(line)


if __name__ == "__main__":
    main()

"""One FOCUS month export (`report --format focus`) over the synthetic cluster: CPU-s, peak RSS.

    python -m bench.focus_month                          # size M, 3 runs, this tree
    python -m bench.focus_month --other TREE             # and TREE beside it, alternating
    python -m bench.focus_month --other TREE --skip-this # TREE alone (this one mid-change)
    python -m bench.focus_month --size S --runs 5 --month 2026-10

The fakes of the size start once here (bodies cached under BENCH_CACHE, default
$TMPDIR/chargeback-bench; the first use of a size generates them). Each tree first exports the
month once unmeasured, so every body it asks for is cached; then every run starts a fresh
`python -c` child in each tree (cwd the tree, so its own `exporter` is imported, never the
installed one: the child checks), alternating which goes first, that calls
`exporter.cli.main(["report", ..., "--format", "focus"], fixed_clock(NOW))` with stdout on a
temporary file. The config is the bench's (bench.synthetic) with long timeouts and every
source's max_response_size raised to 1GiB: the FOCUS export reads OpenCost's month as one
`step=1d` body, at M about 410 MiB for a closed month and 185 MiB for the 14 whole days to
date, both past the exporter's default of 128MiB, which refuses them (the report exits 1 with
no cost data); `--max-response-size 128MiB` shows that. Per run, as JSON:

  cpu        user + system CPU-s of the report call alone (getrusage in the child, around
             main(); the child's own imports of exporter.cli and exporter.clock excluded, any
             module main() imports on the way included; children of the child counted)
  cpu_child  the same for the whole child process, interpreter start and imports included
  wall       seconds of the report call
  rss        peak RSS of the child, MiB (VmHWM; imports included)
  rows       lines of the CSV, its header included
  bytes      size of the CSV

then the medians of each tree and this / other. --month asks for a closed month; the fakes
keep every upstream's history back to October 2026 (bench.synthetic.NOW is 2026-11-15 12:30
UTC), so 2026-10 is the one closed month they answer in full. Measured, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.servers import Upstreams
from bench.synthetic import NOW, SIZES

__all__ = ["CHILD", "FIGURES", "main"]

# The child, run as `python -c CHILD CONFIG FIGURES_FILE MONTH` with cwd the tree: a script
# file would put its own folder first on sys.path and import the installed (editable) tree.
CHILD = """
import json, os, resource, sys, time
from datetime import datetime

def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

def peak_rss_mib():
    with open("/proc/self/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")

config, figures, month, now = sys.argv[1:5]
import exporter
from exporter.cli import main
from exporter.clock import fixed_clock

argv = ["report", "--config.file", config, "--format", "focus"]
if month:
    argv += ["--month", month]
clock = fixed_clock(datetime.fromisoformat(now))
began, start = time.perf_counter(), cpu()
code = main(argv, clock)
sys.stdout.flush()
cpu_report, wall = cpu() - start, time.perf_counter() - began
with open(figures, "w", encoding="utf-8") as out:
    json.dump(
        {
            "code": code,
            "cpu": cpu_report,
            "cpu_child": cpu(),
            "wall": wall,
            "rss": peak_rss_mib(),
            "exporter": os.path.realpath(exporter.__file__),
        },
        out,
    )
"""
# What a run reports, and what its medians are taken of.
FIGURES = ("cpu", "cpu_child", "wall", "rss", "rows", "bytes")
# The report's own word that a source failed: its figures would not be the month's.
_PARTIAL = "some sources failed"


def _child(tree: Path, config: Path, month: str | None, work: Path) -> dict[str, Any]:
    """One export in a fresh interpreter in `tree`: its figures, or `ok` false and why."""
    csv, figures, errors = work / "focus.csv", work / "figures.json", work / "stderr.txt"
    figures.unlink(missing_ok=True)
    argv = [sys.executable, "-c", CHILD, str(config), str(figures), month or "", NOW.isoformat()]
    with csv.open("wb") as out, errors.open("wb") as err:
        done = subprocess.run(argv, cwd=tree, stdout=out, stderr=err, check=False)
    stderr = errors.read_text(encoding="utf-8", errors="replace")
    tail = "\n".join(stderr.strip().splitlines()[-15:])
    if done.returncode != 0 or not figures.exists():
        return {"ok": False, "why": f"exit {done.returncode}", "stderr": tail}
    result: dict[str, Any] = json.loads(figures.read_text(encoding="utf-8"))
    exporter = Path(result.pop("exporter"))
    if not exporter.is_relative_to(tree.resolve()):
        return {"ok": False, "why": f"imported {exporter}, not {tree}'s exporter"}
    data = csv.read_bytes()
    result.update(rows=data.count(b"\n"), bytes=len(data))
    if result["code"] != 0:
        return {"ok": False, "why": f"report exit {result['code']}", "stderr": tail, **result}
    if _PARTIAL in stderr:
        return {"ok": False, "why": "a source failed: a partial month", "stderr": tail, **result}
    return {"ok": True, **result}


def _raise_size(config: Path, size: str) -> None:
    """Set every source's max_response_size: OpenCost's by-day body outgrows the default."""
    data = json.loads(config.read_text(encoding="utf-8"))
    for source in data["sources"].values():
        source["max_response_size"] = size
    config.write_text(json.dumps(data), encoding="utf-8")


def _show(figures: dict[str, Any]) -> str:
    if not figures["ok"]:
        return json.dumps(figures)
    return json.dumps({k: round(figures[k], 3) for k in FIGURES})


def _medians(runs: list[dict[str, Any]]) -> dict[str, float] | None:
    ok = [r for r in runs if r["ok"]]
    if not ok:
        return None
    return {k: float(statistics.median(r[k] for r in ok)) for k in FIGURES}


def main(argv: list[str] | None = None) -> None:
    """Export the month in each tree, alternating, and print each run and the medians."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.focus_month",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--size", choices=sorted(SIZES), default="M", help="default M")
    parser.add_argument("--runs", type=int, default=3, help="measured runs per tree (default 3)")
    parser.add_argument(
        "--other", metavar="TREE", help="another tree (exporter, chargeback_demo) beside this one"
    )
    parser.add_argument(
        "--skip-this", action="store_true", help="measure --other alone (this tree mid-change)"
    )
    parser.add_argument(
        "--month", metavar="YYYY-MM", help="a closed month (default: the month to date)"
    )
    parser.add_argument(
        "--max-response-size",
        metavar="SIZE",
        default="1GiB",
        help="every source's max_response_size (default 1GiB; the exporter's own is 128MiB)",
    )
    args = parser.parse_args(argv)
    trees: dict[str, Path] = {}
    if not args.skip_this:
        trees["this"] = Path.cwd()
    if args.other is not None:
        trees["other"] = Path(args.other).resolve()
    if not trees:
        parser.error("--skip-this needs --other")
    size = SIZES[args.size]
    cache = Path(os.environ.get("BENCH_CACHE", Path(tempfile.gettempdir()) / "chargeback-bench"))
    upstreams = Upstreams(size, cache).start()
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    try:
        with tempfile.TemporaryDirectory(prefix="chargeback-focus-") as tmp:
            work = Path(tmp)
            # Long timeouts: a first use waits on the generator; a cached body never does.
            config = upstreams.write_config(work / "focus.json", warm=True)
            _raise_size(config, args.max_response_size)
            for name, tree in list(trees.items()):
                bodies = len(list(upstreams.cache.rglob("*.body")))
                began = time.perf_counter()
                warm = _child(tree, config, args.month, work)
                took = time.perf_counter() - began
                new = len(list(upstreams.cache.rglob("*.body"))) - bodies
                print(
                    f"warm-up {name} ({tree}): {took:.1f} s wall, {new} bodies generated: "
                    f"{_show(warm)}",
                    flush=True,
                )
                if not warm["ok"]:
                    print(f"{name}: the warm-up failed, not measured", flush=True)
                    del trees[name], results[name]
            for run in range(args.runs):
                # Alternating which goes first, so neither always meets the other's leftovers.
                order = list(trees.items()) if run % 2 == 0 else list(trees.items())[::-1]
                for name, tree in order:
                    figures = _child(tree, config, args.month, work)
                    results[name].append(figures)
                    print(f"run {run + 1} {name}: {_show(figures)}", flush=True)
    finally:
        upstreams.stop()
    month = args.month or f"{NOW:%Y-%m} to date"
    medians = {name: _medians(runs) for name, runs in results.items()}
    for name, m in medians.items():
        ok = sum(r["ok"] for r in results[name])
        if m is None:
            print(f"{name}: no run succeeded")
            continue
        print(
            f"{name} ({ok}/{len(results[name])} runs): FOCUS {month} at {size.name}: "
            f"cpu {m['cpu']:.2f} s (whole child {m['cpu_child']:.2f}) wall {m['wall']:.2f} s "
            f"rss {m['rss']:.0f} MiB rows {m['rows']:.0f} bytes {m['bytes']:.0f}"
        )
    this, other = medians.get("this"), medians.get("other")
    if this is not None and other is not None:
        ratios = {k: this[k] / other[k] if other[k] else float("nan") for k in FIGURES}
        print("this / other: " + " ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
    print(json.dumps({"size": size.name, "month": month, "medians": medians}))


if __name__ == "__main__":
    main()

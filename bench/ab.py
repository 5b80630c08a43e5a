"""One source's refresh in fresh processes alternating between two source trees, one set of fakes.

    python -m bench.ab SIZE SOURCE OTHER_TREE [runs]
    python -m bench.ab SIZE all OTHER_TREE [runs] --rebuilds
    python -m bench.ab SIZE all . 1 --steps

OTHER_TREE holds another `exporter`, `bench` and `chargeback_demo` (say, `git archive` of an
earlier commit); each run starts `python -m bench.child refresh` in it and then here, so the
two share the machine's load, and the medians of cold CPU-s, steady CPU-s and peak RSS print.
With `--rebuilds`, each child runs `bench.child rebuilds` instead: the CPU-s of the rebuild
after each source's refresh alone. With `--steps`, this tree alone (OTHER_TREE is not run):
step by step (each source's refresh, then the rebuild, twice) its CPU-s, the peak RSS so far
and the RSS now, which show the step that raises the peak and what stays resident beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.servers import Upstreams
from bench.synthetic import SIZES


def _run(tree: str, config: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.child", command, str(config)],
        check=True,
        capture_output=True,
        text=True,
        cwd=tree,
    )


def _child(tree: str, config: Path, command: str = "refresh") -> dict[str, float]:
    out = _run(tree, config, command)
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    if not figures["ok"]:
        raise SystemExit(f"{tree}: a refresh failed\n{out.stderr}")
    return figures


def main(argv: list[str] | None = None) -> None:
    """Alternate the two trees' refreshes and print each run and the medians."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.ab",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("size", choices=sorted(SIZES))
    parser.add_argument("source", help="opencost, dcgm, kueue, litellm, dcgm-prometheus, or all")
    parser.add_argument("other", help="the other tree (exporter, bench, chargeback_demo)")
    parser.add_argument("runs", type=int, nargs="?", default=3)
    parser.add_argument("--rebuilds", action="store_true", help="time the rebuilds instead")
    parser.add_argument("--steps", action="store_true", help="peak and resident RSS by step")
    args = parser.parse_args(argv)
    command = "steps" if args.steps else "rebuilds" if args.rebuilds else "refresh"
    size, source, other, runs = SIZES[args.size], args.source, args.other, args.runs
    cache = Path(os.environ.get("BENCH_CACHE", Path(tempfile.gettempdir()) / "chargeback-bench"))
    upstreams = Upstreams(size, cache).start()
    trees = {"other": other, "this": str(Path.cwd())}
    if args.steps:
        trees = {"this": str(Path.cwd())}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="chargeback-ab-") as tmp:
        config = upstreams.write_config(Path(tmp) / "ab.json", None if source == "all" else source)
        for run in range(runs):
            for name, tree in trees.items():
                if args.steps:
                    print(_run(tree, config, command).stdout.strip(), flush=True)
                    continue
                figures = _child(tree, config, command)
                results[name].append(figures)
                print(f"run {run + 1} {name}: {figures}", flush=True)
    upstreams.stop()
    for name, runs_of in results.items() if not args.steps else ():
        keys = [k for k in runs_of[0] if k != "ok"]
        medians = {k: statistics.median(r[k] for r in runs_of) for k in keys}
        print(f"{name}: " + " ".join(_figure(k, v) for k, v in medians.items()))


def _figure(key: str, value: float) -> str:
    return f"{key} {value:.0f} MiB" if key == "rss" else f"{key} {value:.2f}"


if __name__ == "__main__":
    main()

"""CPU seconds and peak memory of reading one large LiteLLM daily-activity body.

    python -m bench.litellm_decode [BODY]   # default: the largest L body under BENCH_CACHE

One UTC date of a thousand teams x fifty models with API-key breakdowns is about 36 MB. This
decodes it as a refresh does (typed decoding into the date's tables, then the date's use per
team, public name and provider model) in a process of its own, three times, and prints the
median CPU-s (reading the file included) and the process's peak RSS beside its RSS before.
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

from exporter.sources.checks import Tally
from exporter.sources.litellm.decode import Days, decode_body
from exporter.sources.litellm.key_breakdown import day_usage


def _kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status (Linux only)")


def _one(path: str) -> None:
    before = _kib("VmRSS:")
    start = time.process_time()
    days: Days = {}
    # As a refresh does: no name keeps the body once it is handed over.
    decode_body(Path(path).read_bytes(), days, Tally())
    uses = sum(len(day_usage(table)) for table in days.values())
    took = time.process_time() - start
    print(
        json.dumps(
            {"cpu": took, "peak": _kib("VmHWM:") / 1024, "base": before / 1024, "uses": uses}
        )
    )


def _largest() -> str:
    cache = Path(os.environ.get("BENCH_CACHE", Path(tempfile.gettempdir()) / "chargeback-bench"))
    bodies = sorted((cache / "L" / "litellm").glob("*.body"), key=lambda p: p.stat().st_size)
    if not bodies:
        raise SystemExit(f"no L LiteLLM bodies under {cache}: run BENCH_SIZES=L make bench once")
    return str(bodies[-1])


def main(argv: list[str] | None = None) -> None:
    """Decode the body in three fresh interpreters and print the medians."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.litellm_decode",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("body", nargs="?", help="a daily-activity body file (default: L's largest)")
    parser.add_argument("--one", metavar="FILE", help="decode FILE once in this process")
    args = parser.parse_args(argv)
    if args.one:
        _one(args.one)
        return
    path = args.body or _largest()
    runs = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-m", "bench.litellm_decode", "--one", path],
            check=True,
            capture_output=True,
            text=True,
        )
        runs.append(json.loads(out.stdout))
    size = Path(path).stat().st_size / 1e6
    cpu = statistics.median(r["cpu"] for r in runs)
    peak = statistics.median(r["peak"] for r in runs)
    base = statistics.median(r["base"] for r in runs)
    print(
        f"one {size:.0f} MB daily body, {runs[0]['uses']:,} uses: {cpu:.2f} CPU-s, "
        f"peak RSS {peak:.0f} MiB ({base:.0f} MiB before the body is read)"
    )


if __name__ == "__main__":
    main()

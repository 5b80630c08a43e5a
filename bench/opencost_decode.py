"""CPU seconds and peak memory of reading one large OpenCost `/allocation` body.

    python -m bench.opencost_decode [allocations]      # default 50,000

Each way of reading runs in a process of its own, so its peak RSS is its own: the body as
the HTTP layer hands it over (bytes), then the records the exporter keeps.

- `stdlib`: the body as text, `json.loads` into dicts, then one Python check per field (how
  the exporter read OpenCost before typed decoding); only the decode and a light walk here.
- `typed`: `parse_allocation_response` on the bytes (msgspec structs, checked while decoding).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from exporter.sources.checks import Tally
from exporter.sources.opencost.body import parse_allocation_response

_FIELDS = ("cpuCost", "gpuCost", "ramCost", "pvCost", "networkCost")


def body(allocations: int, seed: int = 1) -> bytes:
    """An `/allocation` reply of one set, spelt as OpenCost (Go) spells it: 5 decimals."""
    rng = random.Random(seed)
    step: dict[str, Any] = {}
    for i in range(allocations):
        ns, node = f"ns-{i % 400}", f"node-{i % 97}"
        name = f"{node}/{ns}/deployment:app-{i}"
        labels = {"team": f"team-{i % 50}", "app_kubernetes_io_name": f"app-{i}"}
        step[name] = {
            "name": name,
            "properties": {
                "cluster": "default-cluster",
                "node": node,
                "namespace": ns,
                "controller": f"deployment:app-{i}",
                "controllerKind": "deployment",
                "labels": labels,
                "namespaceLabels": {"kubernetes_io_metadata_name": ns},
            },
            "window": {"start": "2026-11-01T00:00:00Z", "end": "2026-11-15T12:00:00Z"},
            "minutes": 20880,
            "cpuCores": round(rng.uniform(0.1, 8), 5),
            "gpuHours": round(rng.uniform(0, 300), 5),
            "ramBytes": round(rng.uniform(1e8, 1e11), 5),
            "pvs": None,
            "lbAllocations": None,
            "gpuAllocation": {"gpuRequestAverage": 1, "gpuUsageAverage": 0.4},
            **{f: round(rng.uniform(0.001, 100), 5) for f in _FIELDS},
            **{f"{f}Adjustment": 0 for f in _FIELDS},
        }
    step["__idle__"] = {"name": "__idle__", "cpuCost": 100.5, "gpuCost": 500.25, "ramCost": 10.0}
    return json.dumps({"code": 200, "data": [step]}, separators=(",", ":")).encode()


def _stdlib(content: bytes) -> int:
    decoded = json.loads(content.decode("utf-8"))
    return sum(1 for step in decoded["data"] for _ in step)


def _typed(content: bytes) -> int:
    allocations, _ = parse_allocation_response(content, hours=348.0, tally=Tally())
    return len(allocations)


def _peak_kib() -> int:
    # VmHWM starts again at exec; ru_maxrss would carry the parent's peak over the fork.
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def measure(way: str, path: str) -> str:
    """One way of reading a body file, in this process: records, CPU seconds, peak RSS."""
    content = Path(path).read_bytes()
    before = _peak_kib()
    started = time.process_time()
    records = {"stdlib": _stdlib, "typed": _typed}[way](content)
    cpu = time.process_time() - started
    peak = _peak_kib()
    return (
        f"{way:7s} {records:>7d} records  {len(content) / 1e6:6.1f} MB  CPU {cpu:6.3f} s  "
        f"peak RSS {peak / 1024:5.0f} MiB (+{(peak - before) / 1024:.0f} over the body)"
    )


def main(argv: list[str] | None = None) -> None:
    """Run each way in a fresh interpreter and print one line each."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.opencost_decode",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "allocations",
        type=int,
        nargs="?",
        default=50_000,
        help="allocations in the body (default: %(default)d)",
    )
    parser.add_argument(
        "--measure",
        nargs=2,
        metavar=("WAY", "FILE"),
        help="one way (stdlib or typed) over a body file, in this process (what each fresh "
        "interpreter runs)",
    )
    args = parser.parse_args(argv)
    if args.measure:
        way, path = args.measure
        if way not in ("stdlib", "typed"):
            parser.error(f"--measure: WAY is stdlib or typed, not {way!r}")
        print(measure(way, path))
        return
    with tempfile.TemporaryDirectory() as tmp:
        # Written once here, so building the body never counts in a reader's peak.
        path = Path(tmp) / "allocation.json"
        path.write_bytes(body(args.allocations))
        for way in ("stdlib", "typed"):
            command = [sys.executable, "-m", "bench.opencost_decode", "--measure", way, str(path)]
            subprocess.run(command, check=True)


if __name__ == "__main__":
    main()

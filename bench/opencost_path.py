"""The OpenCost path over one `/allocation` body, in a process that imports only that path.

    python -m bench.opencost_path FILE      # JSON: CPU-s, peak RSS MiB, exposition bytes

The peer comparison runs this rather than `bench.child`, whose other commands import the
refresher, the servers and the upstream fakes: none of that is the OpenCost path's work, and
the peer's process pays only for its own imports too.
"""

from __future__ import annotations

import argparse
import json
import resource
from datetime import UTC, datetime
from pathlib import Path

from exporter.config.schema import Config
from exporter.exposition.render import render
from exporter.exposition.series import series
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.sources.opencost.body import parse_allocation_response
from exporter.sources.opencost.snapshot import AllocationSet, OpenCostSnapshot
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots

__all__ = ["NOW", "cpu_seconds", "main", "opencost", "peak_rss_mib"]

# The bench's instant (bench.synthetic.NOW), spelt here so the fakes are not imported.
NOW = datetime(2026, 11, 15, 12, 30, tzinfo=UTC)


def cpu_seconds() -> float:
    """CPU seconds this process has used, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mib() -> float:
    """Peak RSS of this process: VmHWM, not ru_maxrss, which keeps the forking parent's peak."""
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def opencost(path: str) -> dict[str, float]:
    """Our OpenCost path over one body: decode and validate, join, render."""
    config = Config.model_validate({"teams": [], "attribution": {"team_label_keys": ["team"]}})
    start = cpu_seconds()
    # The bytes as the HTTP layer hands them over: the source decodes those, never a json.loads.
    allocations, idle = parse_allocation_response(Path(path).read_bytes())
    window = AllocationSet(NOW.replace(day=1, hour=0, minute=0), NOW, allocations, idle)
    records = Snapshots(opencost=OpenCostSnapshot(window, window))
    exposition = render(
        series(join(config, Attributor(config), records, Reading.open(NOW, config.zone)))
    )
    return {"cpu": cpu_seconds() - start, "rss": peak_rss_mib(), "bytes": len(exposition.text)}


def main(argv: list[str] | None = None) -> None:
    """Print the figures of one body file as JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.opencost_path",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="an OpenCost /allocation response body")
    print(json.dumps(opencost(parser.parse_args(argv).file)))


if __name__ == "__main__":
    main()

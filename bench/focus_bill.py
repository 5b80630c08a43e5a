"""Reading a month of a cloud's FOCUS cost export (the `focus` bill source): rows, CPU-s, peak RSS.

    python -m bench.focus_bill                 # 10,000 GPUs beside 1,000, 3 runs each
    python -m bench.focus_bill --runs 5 --gpus 50000

The export is generated here, gzip CSV as AWS Data Exports writes it: one row per resource per
UTC day of October 2026 for every GPU node (8 GPUs each, tagged with the cluster), a volume of
each node, and as many VMs of other clusters (untagged), so the cluster's rows are a quarter of
the file. Each run is a fresh `python -c` child (cwd this tree) that reads the month through
`exporter.sources.bills.focus_export.fetch` with the cluster tag; per run it reports the CPU-s
of the read alone (getrusage around fetch), the child's peak RSS (VmHWM, interpreter and
imports included) and the lines it kept. The two sizes print side by side with their ratios:
the file grows tenfold, the memory should not (the rows are streamed; only the kept lines, one
per node and day, are held). Measured, never asserted.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

__all__ = ["CHILD", "main", "write_export"]

GPUS_PER_NODE = 8
MONTH = date(2026, 10, 1)
DAYS = 31
TAG = "kubernetes.io/cluster/bench=owned"
COLUMNS = (
    "BilledCost",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ProviderName",
    "RegionId",
    "ResourceId",
    "ServiceCategory",
    "ServiceName",
    "SubAccountId",
    "Tags",
)

CHILD = """
import json, resource, sys
from pathlib import Path
from zoneinfo import ZoneInfo
import exporter
assert Path(exporter.__file__).resolve().is_relative_to(Path.cwd().resolve()), exporter.__file__
from exporter.calendar import Month
from exporter.config.bills import FocusExportConfig
from exporter.sources.bills import focus_export
from exporter.sources.bills.settings import BillShared
from exporter.sources.reading import Reading

def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime

path, tag = sys.argv[1], sys.argv[2]
cfg = FocusExportConfig.model_validate({"type": "focus", "path": path, "cluster_tag": tag})
reading = Reading.closed_month(Month.parse("2026-10", ZoneInfo("UTC")))
shared = BillShared("bench", "USD", clock=lambda: 4e9)  # long after the file settled
client = focus_export.build_client(cfg)
before = cpu()
bill = focus_export.fetch(client, cfg, shared, reading)
took = cpu() - before
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"cpu": took, "rss": int(hwm.split()[1]) / 1024, "lines": len(bill.lines)}))
"""


def write_export(path: Path, gpus: int) -> int:
    """A month's export of a cluster of `gpus` GPUs; the rows written (header excluded)."""
    nodes = -(-gpus // GPUS_PER_NODE)
    tagged = json.dumps({TAG.split("=")[0]: "owned"})
    rows = 0
    with gzip.open(path, "wt", encoding="utf-8", newline="", compresslevel=6) as out:
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        for n in range(DAYS):
            day = MONTH + timedelta(days=n)
            for node in range(nodes):
                for resource, category, service, cost, tags in (
                    (f"i-{node:08x}gpu", "Compute", "Amazon Elastic Compute Cloud", 786.24, tagged),
                    (f"vol-{node:08x}", "Storage", "Amazon Elastic Block Store", 3.2, tagged),
                    (f"i-{node:08x}web", "Compute", "Amazon Elastic Compute Cloud", 9.1, "{}"),
                    (f"i-{node:08x}db", "Databases", "Amazon RDS", 22.5, '{"team": "db"}'),
                ):
                    writer.writerow(_row(day, resource, category, service, cost, tags))
                    rows += 1
    return rows


def _row(
    day: date, resource: str, category: str, service: str, cost: float, tags: str
) -> list[str]:
    return [
        f"{cost:.6f}",
        "USD",
        "2026-11-01 00:00:00",
        "2026-10-01 00:00:00",
        "Usage",
        "",
        f"{service} {resource}",
        f"{day + timedelta(days=1)} 00:00:00",
        f"{day} 00:00:00",
        "AWS",
        "eu-south-2",
        resource,
        category,
        service,
        "123456789012",
        tags,
    ]


def _run(path: Path, runs: int) -> dict[str, float]:
    figures = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), TAG],
            check=True,
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        figures.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(f[key] for f in figures) for key in ("cpu", "rss", "lines")}


def main(argv: list[str] | None = None) -> None:
    """Generate the two exports, read each `runs` times, print the medians side by side."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.focus_bill",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--gpus", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    sizes = (args.gpus // 10, args.gpus)
    print(f"\nFOCUS bill: a month's export read by the focus source (median of {args.runs})")
    head = ("GPUs", "rows", "file MiB", "lines kept", "CPU-s", "peak RSS MiB")
    print("   " + " ".join(f"{h:>12}" for h in head))
    measured = []
    with tempfile.TemporaryDirectory(prefix="chargeback-bench-focus-") as tmp:
        for gpus in sizes:
            path = Path(tmp) / f"focus-{gpus}.csv.gz"
            rows = write_export(path, gpus)
            figures = _run(path, args.runs)
            mib = path.stat().st_size / 2**20
            cells = (gpus, rows, mib, figures["lines"], figures["cpu"], figures["rss"])
            measured.append(cells)
            print(
                f"   {gpus:>12,} {rows:>12,} {mib:>12.1f} {int(cells[3]):>12,} "
                f"{cells[4]:>12.2f} {cells[5]:>12.0f}"
            )
    small, large = measured
    ratios = [b / a if a else float("nan") for a, b in zip(small, large, strict=True)]
    print("   " + f"{'ratio':>12} " + " ".join(f"{r:>11.1f}x" for r in ratios[1:]))
    print("   the rows stream past; what grows is the lines kept, one per tagged resource and day")


if __name__ == "__main__":
    main()

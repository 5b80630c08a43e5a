"""How many FOCUS rows every dimension in `Tags` makes, for a synthetic month of many teams.

The cluster is the bench's (`bench.synthetic`) in shape, built in process: at L, 1,000 teams
of 50 workloads each, `product` from the workloads' `app` label (97 values) and `environment`
one value per team (its namespace), both capped at 50 values, over the 15 days of the month to
date. Costs are the workloads' own (GPU, CPU, memory, volumes, network), an idle share by GPU
cost and one external LLM model per team, so nearly every combination is worth a cent or more:
the count is the bound rather than the typical case. Prints the rows without dimensions (the
team alone in `Tags`) and with both, the time the split takes, and how many of each
dimension's printed cells the rows miss (and by how much).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from datetime import timedelta

from bench.synthetic import NOW, SIZES, Size
from exporter.finance.focus.days import DayLedger
from exporter.finance.focus.rows import FocusContext, focus_rows
from exporter.finance.focus.tags import tagging
from exporter.finance.report.figures import Report, build_report
from exporter.ledger.attribution import IDLE, Placement
from exporter.ledger.costs.ledger import CostLine, Ledger
from exporter.ledger.dimensions.joint import joint_split
from exporter.ledger.dimensions.split import cap_values, split_ledger

NAMES = ("product", "environment")
DAYS = 15
_HOURS = 24.0 * DAYS


def _lines(size: Size) -> tuple[list[CostLine], list[list[str]]]:
    gpu_every = max(1, size.workloads // size.gpus)
    lines: list[CostLine] = []
    values: list[list[str]] = [[], []]
    for i in range(size.workloads):
        team = f"team-{i % size.teams}"
        gpu = i % gpu_every == 0
        costs = {
            "gpu": 2.5 * _HOURS * (0.4 if i % 3 == 0 else 1.0) if gpu else 0.0,
            "cpu": 0.03 * (4.0 if gpu else 0.5) * _HOURS,
            "ram": 0.004 * (64.0 if gpu else 2.0) * _HOURS,
            "storage": 0.0001 * 100.0 * _HOURS if i % 5 == 0 else 0.0,
            "network": 0.01 * _HOURS,
        }
        lines.append(CostLine(Placement(team, "label"), f"node-{i}", costs))
        values[0].append(f"app-{i % 97}")
        values[1].append(f"ns-{team}")
    return lines, values


def _ledger(lines: list[CostLine], size: Size) -> Ledger:
    costs: dict[tuple[str, str], float] = defaultdict(float)
    for line in lines:
        for component, amount in line.costs.items():
            costs[(line.placement.team, component)] += amount
    for k in range(size.teams):
        team = f"team-{k}"
        costs[(team, "idle_share")] = 0.2 * costs[(team, "gpu")]
        costs[(team, "llm_external")] = 3.0 + (k % 7)
    costs[(IDLE, "gpu")] = 1234.56
    return Ledger(dict(costs))


def _report(ledger: Ledger, by: str = "team") -> Report:
    return build_report(ledger, "EUR", "2026-11", {}, by=by)


def main(argv: list[str] | None = None) -> None:
    """Print the row counts and how the rows foot by each dimension."""
    parser = argparse.ArgumentParser(prog="python -m bench.focus_tags", description=__doc__)
    parser.add_argument("size", nargs="?", default="L", choices=sorted(SIZES), help="default L")
    size = SIZES[parser.parse_args(argv).size]
    lines, values = _lines(size)
    ledger = _ledger(lines, size)
    report = _report(ledger)
    reports, folded = [], []
    for d, name in enumerate(NAMES):
        split, gone = cap_values(split_ledger(name, ledger, lines, values[d]), 50)
        reports.append(_report(Ledger(dict(split.costs)), name))
        folded.append(gone)
    start = NOW - timedelta(days=DAYS)
    days = [
        DayLedger(
            start + timedelta(days=i),
            start + timedelta(days=i + 1),
            {k: v / DAYS for k, v in ledger.costs.items()},
        )
        for i in range(DAYS)
    ]
    ctx = FocusContext("EUR", start, NOW, "bench", "P", "P", None)
    began = time.perf_counter()
    plain = focus_rows(report, days, ctx)
    alone = time.perf_counter() - began
    began = time.perf_counter()
    joint = joint_split(NAMES, ledger, lines, values, None, (), folded)
    tagged = focus_rows(report, days, ctx, tagging(joint, reports))
    took = time.perf_counter() - began
    print(f"size {size.name}: {size.teams:,} teams, {size.workloads:,} workloads, {DAYS} days")
    print(f"  rows with the team alone in Tags: {len(plain):,} ({alone:.1f} s)")
    print(f"  rows with both dimensions too: {len(tagged):,} ({took:.1f} s)")
    for d, (name, by) in enumerate(zip(NAMES, reports, strict=True)):
        sums: dict[tuple[str, str], int] = defaultdict(int)
        for row in tagged:
            value = json.loads(row.Tags)[name]
            sums[(value, row.x_Component)] += round(float(row.BilledCost) * 100)
        gaps = [
            sums.get((r.team, c), 0) - round(float(r.costs[c]) * 100)
            for r in by.rows
            for c in by.components
        ]
        off = [g for g in gaps if g]
        print(
            f"  {name}: {len(gaps):,} printed cells, {len(off)} off "
            f"(at most {max((abs(g) for g in off), default=0)} cent), folded {len(folded[d])}"
        )


if __name__ == "__main__":
    main()

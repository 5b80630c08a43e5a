"""The advice's cost at scale: parsing a week's history and advising, in CPU seconds.

    python -m bench.advice [GPUS]

Builds the 15 query answers a cluster of GPUS held GPUs (default 10,000) gives the history
read, parses them (exporter.sources.dcgm_history.read) and advises (exporter.ledger.advice),
and prints each step's CPU seconds: the work the exporter does once an `advice.interval`.
"""

from __future__ import annotations

import argparse
import time
from datetime import timedelta

from exporter.config.advice import AdviceConfig
from exporter.ledger.advice import Prices, advise
from exporter.sources.checks import Tally
from exporter.sources.dcgm_history.queries import device_queries
from exporter.sources.dcgm_history.read import read_devices
from exporter.sources.dcgm_history.records import History

LABELS = ("gpu", "UUID", "modelName", "Hostname", "namespace", "pod", "container", "team")


def _answers(gpus: int) -> dict[str, list[tuple[dict[str, str], float]]]:
    exprs = device_queries(LABELS, timedelta(days=7), timedelta(minutes=5), 0.05)
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for (metric, stat), expr in exprs.items():
        rows = []
        for i in range(gpus):
            labels = {
                "gpu": str(i % 8), "UUID": f"GPU-{i}", "modelName": "NVIDIA H100 80GB HBM3",
                "Hostname": f"node-{i // 8}", "namespace": f"ns-{i % 50}", "pod": f"pod-{i}",
                "container": "main", "team": f"team-{i % 50}",
            }  # fmt: skip
            value = {"samples": 2016.0, "idle": 0.1, "resets": 0.0}.get(stat)
            if value is None:
                value = 20_000.0 + i % 1000 if "FB" in metric else 0.05 + (i % 90) / 100
            rows.append((labels, value))
        out[expr] = rows
    return out


def main(argv: list[str] | None = None) -> None:
    """Time parsing and advising for a cluster of the given size."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.advice",
        description="Parse a week of DCGM history answers and advise on them; print CPU seconds.",
    )
    parser.add_argument(
        "gpus", type=int, nargs="?", default=10_000, help="GPUs in the cluster (10000)"
    )
    gpus = parser.parse_args(argv).gpus
    answers = _answers(gpus)
    began = time.process_time()
    devices = read_devices(
        answers.__getitem__, LABELS, timedelta(days=7), timedelta(minutes=5), 0.05, Tally()
    )
    parsed = time.process_time()
    result = advise(
        History(7 * 86_400.0, 300.0, devices),
        AdviceConfig(),
        team_of=lambda d: d.labels.get("team", ""),
        queue_team=lambda q: q,
        prices=Prices(lambda m: 1.40, lambda f: 1.40),
        charges_quota=False,
    )
    done = time.process_time()
    print(
        f"{gpus} GPUs: parse {parsed - began:.2f} CPU-s, advise {done - parsed:.2f} CPU-s, "
        f"{len(result.advice)} advice, {len(result.withheld)} withheld"
    )


if __name__ == "__main__":
    main()

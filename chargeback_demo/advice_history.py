"""A week of the fake dcgm-exporter's series, backfilled so the demo's advice has history.

The advice reads DCGM's raw series over a window (7 days by default) from the Prometheus that
scrapes dcgm-exporter; a demo Prometheus started a minute ago has a minute of them, and every
workload would be withheld as `thin_history`. So the demo writes the week before the backfill
as Prometheus would have scraped it (every 5 minutes, the fake's own answer at each instant,
under `job="dcgm-exporter"` and the fake's address) and `promtool` turns it into a block, as
chargeback_demo.history does for the exporter's own series of the last closed month.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from chargeback_demo import fake_dcgm
from chargeback_demo.cluster import Cluster
from chargeback_demo.history import STEP, backfill_beside

__all__ = ["DCGM_JOB", "WINDOW", "backfill_week", "dcgm_openmetrics"]

WINDOW = timedelta(days=7)  # advice.window's default
DCGM_JOB = "dcgm-exporter"


def dcgm_openmetrics(cluster: Cluster, end: datetime, instance: str) -> str:
    """The fake dcgm-exporter's series over the week before `end`, as OpenMetrics."""
    step = int(STEP.total_seconds())
    first = (int((end - WINDOW).timestamp()) // step + 1) * step
    last = int(end.timestamp())
    series: dict[str, dict[str, list[str]]] = {}
    scraped = f'instance="{instance}",job="{DCGM_JOB}"'
    for stamp in range(first, last, step):
        at = datetime.fromtimestamp(stamp, tz=UTC)
        text = fake_dcgm.render_metrics(cluster, at, fake_dcgm.FakeDcgmOptions())
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            head, value = line.rsplit(" ", 1)
            name, labels = head.split("{", 1)
            points = series.setdefault(name, {}).setdefault(labels[:-1], [])
            points.append(f"{value} {stamp}")
    lines: list[str] = []
    for name in sorted(series):
        lines.append(f"# TYPE {name} gauge")
        for labels, points in series[name].items():
            lines.extend(f"{name}{{{labels},{scraped}}} {point}" for point in points)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def backfill_week(work: Path, data: Path, cluster: Cluster, end: datetime, instance: str) -> str:
    """Backfill the week before `end` beside a running Prometheus (history.backfill_beside); a
    line saying how it went."""
    try:
        seconds = backfill_beside(
            work, lambda: dcgm_openmetrics(cluster, end, instance), data, "advice-blocks"
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"demo: the week of DCGM history for advice could not be backfilled ({exc})"
    return f"demo: a week of DCGM history for advice backfilled in {seconds:.0f} s"

"""The exporter's own series over the demo's last closed month, backfilled into a Prometheus.

The report reads a closed month's GPU operation and Kueue quota back from the exporter's own
series (exporter.sources.gpu_history, exporter.sources.kueue.history), and the demo's cluster
knows every hour of every month. So the demo writes the series its exporter would have
served over the last closed month, as OpenMetrics, and `promtool tsdb create-blocks-from
openmetrics` turns them into a block. Each instant is the fakes' own answer (fake_dcgm,
kueue_objects) read through the exporter's own parsers, ledger and exposition, so the figures
are those the exporter computes, under the catalogue's names and labels.

The step is 5 minutes: the readers evaluate every minute with Prometheus's 5-minute lookback,
so each minute finds the sample of its 5 minutes, and the demo's schedules change only on
whole hours. Only the utilisation's wobble (minutes apart) is sampled, not integrated.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from chargeback_demo import fake_dcgm, kueue_objects
from chargeback_demo.cluster import Cluster
from chargeback_demo.prometheus import DEFAULT_JOB, start_prometheus, stop, wait_ready
from exporter.calendar import Month
from exporter.config.schema import Config
from exporter.exposition.catalogue.gpus import GPUS, TEAM_GPU_UTILIZATION_RATIO
from exporter.exposition.catalogue.quota import QUOTA_LENDING_LIMIT, QUOTA_NOMINAL
from exporter.exposition.catalogue.unit_economics import (
    TEAM_GPU_CO2E_GRAMS_PER_HOUR,
    TEAM_GPU_ENERGY_KWH_PER_HOUR,
)
from exporter.exposition.samples import Sample
from exporter.exposition.series.gpus import gpu_samples
from exporter.exposition.series.unit_economics import energy_samples
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.gpus import model_price, team_gpus
from exporter.ledger.units.energy import team_energy
from exporter.sources.dcgm.parse import parse_metrics
from exporter.sources.dcgm.records import DcgmSnapshot
from exporter.sources.kueue.clusterqueue import parse_cluster_queue

__all__ = [
    "RETENTION",
    "STEP",
    "backfill",
    "backfill_beside",
    "backfill_running",
    "can_backfill",
    "history_openmetrics",
    "history_prometheus",
    "last_closed_month",
    "quota_samples",
    "samples_at",
]

STEP = timedelta(minutes=5)
RETENTION = "--storage.tsdb.retention.time=100y"
INSTANCE = "127.0.0.1:10290"  # the demo exporter's default address, as a scrape labels it
# The families the report's history readers query.
_READ = frozenset(
    f.name
    for f in (
        GPUS,
        TEAM_GPU_UTILIZATION_RATIO,
        TEAM_GPU_ENERGY_KWH_PER_HOUR,
        TEAM_GPU_CO2E_GRAMS_PER_HOUR,
        QUOTA_NOMINAL,
        QUOTA_LENDING_LIMIT,
    )
)
_KUEUE_VERSION = "v1beta2"


def last_closed_month(now: datetime, config: Config) -> Month:
    """The calendar month before the one holding `now`, in the config's time zone."""
    current = Month.of(now, config.zone)
    return Month.of(current.start - timedelta(microseconds=1), config.zone)


def instants(month: Month) -> Iterator[datetime]:
    """Every step of [start, end), on the month's start (a whole hour in UTC)."""
    # In UTC: an aware local time adds wall time, which loses the hour summer time gives back.
    t, end = month.start.astimezone(UTC), month.end.astimezone(UTC)
    while t < end:
        yield t
        t += STEP


def samples_at(
    cluster: Cluster, config: Config, attributor: Attributor, t: datetime
) -> list[Sample]:
    """What the exporter serves at `t` of the families the history readers query."""
    text = fake_dcgm.render_metrics(cluster, t, fake_dcgm.FakeDcgmOptions())
    records = parse_metrics(text, default_node=cluster.node)
    dcgm = config.sources.dcgm
    threshold = dcgm.idle_threshold if dcgm is not None else 0.05
    teams = team_gpus(DcgmSnapshot(tuple(records)), attributor, threshold, model_price({}))
    out = [*gpu_samples(teams), *energy_samples(team_energy(records, attributor, config))]
    return [s for s in out if s.family.name in _READ]


def quota_samples(cluster: Cluster, config: Config, t: datetime) -> list[Sample]:
    """Every queue's nominal quota and lending limit at `t`, as the exporter serves them."""
    owner = {q: team.name for team in config.teams for q in team.cluster_queues}
    out: list[Sample] = []
    for queue in cluster.queues:
        item = kueue_objects.cluster_queue(cluster, queue, t, _KUEUE_VERSION)
        for r in parse_cluster_queue(item, _KUEUE_VERSION):
            labels = {
                "team": owner.get(r.cluster_queue, ""),
                "cluster_queue": r.cluster_queue,
                "cohort": r.cohort,
                "flavor": r.flavor,
                "resource": r.resource,
            }
            out.append(Sample.of(QUOTA_NOMINAL, r.nominal, **labels))
            out.append(Sample.of(QUOTA_LENDING_LIMIT, r.lending_limit, **labels))
    return out


def history_openmetrics(cluster: Cluster, config: Config, month: Month) -> str:
    """The month's series as OpenMetrics text: each family together, each series in time."""
    attributor = Attributor(config)
    series: dict[str, dict[tuple[tuple[str, str], ...], list[str]]] = {}
    hourly: list[Sample] = []
    for t in instants(month):
        stamp = f"{t.timestamp():.0f}"
        if t.minute == 0 or not hourly:
            # Kueue's quotas change only with its objects, never inside an hour of the
            # demo: read on the hour, they cost little of the month's generation.
            hourly = quota_samples(cluster, config, t)
        for s in [*samples_at(cluster, config, attributor, t), *hourly]:
            points = series.setdefault(s.family.name, {}).setdefault(s.labels, [])
            points.append(f"{_value(s.value)} {stamp}")
    lines: list[str] = []
    for name in sorted(series):
        lines.append(f"# TYPE {name} gauge")
        for labels, points in series[name].items():
            head = name + "{" + _labels(labels) + "}"
            lines.extend(f"{head} {point}" for point in points)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def _labels(labels: tuple[tuple[str, str], ...]) -> str:
    scraped = (*labels, ("instance", INSTANCE), ("job", DEFAULT_JOB))
    return ",".join(f'{k}="{_escape(v)}"' for k, v in scraped)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _value(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)


def can_backfill() -> bool:
    """Whether promtool (to write blocks) and prometheus (to serve them) are installed."""
    return shutil.which("promtool") is not None and shutil.which("prometheus") is not None


def backfill(work: Path, openmetrics: str, data: Path) -> None:
    """Write `openmetrics` as TSDB blocks under `data`, through a scratch file in `work`."""
    source = work / "history.om"
    source.write_text(openmetrics, encoding="utf-8")
    # One block for the whole month: promtool's default 2 h blocks take far longer.
    subprocess.run(
        [
            "promtool",
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            "--max-block-duration=1000h",
            str(source),
            str(data),
        ],
        check=True,
        capture_output=True,
    )
    source.unlink()


@contextmanager
def history_prometheus(work: Path, cluster: Cluster, config: Config, month: Month) -> Iterator[str]:
    """A Prometheus serving only `month`'s backfilled series; its URL while the block lasts."""
    backfill(work, history_openmetrics(cluster, config, month), work / "data")
    # Retention is long so the block stays, whatever the machine's date.
    proc, url = start_prometheus(work, targets=[], extra_args=[RETENTION])
    try:
        wait_ready(proc, f"{url}/-/ready")
        yield url
    finally:
        stop(proc)


def backfill_beside(work: Path, openmetrics: Callable[[], str], data: Path, scratch: str) -> float:
    """Backfill the series `openmetrics` writes into blocks under `work/scratch` and move them
    into a running Prometheus's `data`, which it loads on its next block reload; the seconds
    it took (OSError or CalledProcessError when it could not)."""
    began = time.monotonic()
    blocks = work / scratch
    backfill(work, openmetrics(), blocks)
    for block in blocks.iterdir():
        block.rename(data / block.name)
    return time.monotonic() - began


def backfill_running(work: Path, data: Path, cluster: Cluster, config: Config, month: Month) -> str:
    """Backfill `month` beside a running Prometheus (backfill_beside); a line saying how it
    went (Prometheus loads it within a minute)."""
    try:
        seconds = backfill_beside(
            work, lambda: history_openmetrics(cluster, config, month), data, "history-blocks"
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"demo: {month.label} could not be backfilled ({exc})"
    return f"demo: {month.label} backfilled in {seconds:.0f} s; Prometheus loads it within a minute"

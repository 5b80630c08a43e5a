"""A closed month's quota read back from a real Prometheus holding a backfilled month of series."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.stack import DemoStack, demo_config_dict
from exporter.cli import main
from exporter.clock import fixed_clock
from exporter.config.schema import Config
from exporter.errors import UpstreamPayloadError
from exporter.exposition.catalogue.quota import QUOTA_LENDING_LIMIT, QUOTA_NOMINAL
from exporter.finance.closed_month import closed_month
from exporter.sources.kueue.history import QuotaSeries, quota_history
from tests.conftest import CLOCK
from tests.support.backfill import backfilled_prometheus

pytestmark = pytest.mark.skipif(shutil.which("promtool") is None, reason="needs promtool")

GPU, FLAVOR = "nvidia.com/gpu", CLUSTER.gpu_flavor
# October 2026 in Madrid: [30 Sep 22:00 UTC, 31 Oct 23:00 UTC), 745 hours (summer time ends).
START, END = datetime(2026, 9, 30, 22, tzinfo=UTC), datetime(2026, 10, 31, 23, tzinfo=UTC)
CHANGE = datetime(2026, 10, 15, 22, tzinfo=UTC)  # 16 October, local midnight: 360 h in
STEP = timedelta(minutes=5)
# research holds 2 GPUs for 360 h and 4 for 385 h: (2 x 360 + 4 x 385) / 745 GPUs on average.
RESEARCH = (2 * 360 + 4 * 385) / 745
LATER = fixed_clock(datetime(2027, 2, 3, 7, 45, tzinfo=UTC))


def _labels(cluster: str, queue: str, pod: str) -> str:
    team = queue.removeprefix("cq-")
    return (
        f'{{cluster="{cluster}",cluster_queue="{queue}",cohort="gpu-pool",flavor="{FLAVOR}",'
        f'resource="{GPU}",team="{team}",instance="{pod}:10290",pod="{pod}"}}'
    )


def _samples(labels: str, value: Any, start: datetime, end: datetime) -> list[str]:
    out, t = [], start
    while t < end:
        v = value(t) if callable(value) else value
        out.append(f"{labels} {v} {int(t.timestamp())}")
        t += STEP
    return out


def _openmetrics() -> str:
    # The next month starts with 100 GPUs everywhere: the month's average must not see them.
    after = END + timedelta(hours=2)

    def research(t: datetime) -> int:
        return 2 if t < CHANGE else (4 if t < END else 100)

    nominal: list[str] = []
    # An HA pair: pod a all month, pod b restarted at the change (as pod c).
    nominal += _samples(_labels("east", "cq-research", "a"), research, START, after)
    nominal += _samples(_labels("east", "cq-research", "b"), research, START, CHANGE)
    nominal += _samples(_labels("east", "cq-research", "c"), research, CHANGE, after)
    for queue in ("cq-vision", "cq-search"):
        nominal += _samples(_labels("east", queue, "a"), 1, START, after)
    nominal += _samples(_labels("west", "cq-research", "w"), 8, START, after)
    nominal += _samples(_labels("nan", "cq-research", "n"), "NaN", START, after)
    nominal += _samples(_labels("neg", "cq-research", "n"), -1, START, after)
    limits = _samples(_labels("east", "cq-research", "a"), "+Inf", START, after)
    limits += _samples(_labels("east", "cq-vision", "a"), 0, START, after)
    return "\n".join(
        [
            "# TYPE chargeback_quota_nominal gauge",
            *(f"chargeback_quota_nominal{s}" for s in nominal),
            "# TYPE chargeback_quota_lending_limit gauge",
            *(f"chargeback_quota_lending_limit{s}" for s in limits),
            "# EOF",
            "",
        ]
    )


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Prometheus whose only data is a backfilled October of quota series."""
    with backfilled_prometheus(tmp_path_factory.mktemp("quota-history"), _openmetrics()) as url:
        yield url


def _config(url: str, cluster: str | None) -> Config:
    prom: dict[str, Any] = {"url": url} | ({"cluster": cluster} if cluster else {})
    return Config.model_validate({"timezone": "Europe/Madrid", "report": {"prometheus": prom}})


def _history(url: str, cluster: str | None) -> dict[str, tuple[float, float]]:
    config = _config(url, cluster)
    month = closed_month("2026-10", config.zone, CLOCK()).month
    assert config.report.prometheus is not None
    series = QuotaSeries(QUOTA_NOMINAL.name, QUOTA_LENDING_LIMIT.name)
    snapshot = quota_history(config.report.prometheus, "config.yaml", month, series)
    return {r.cluster_queue: (r.nominal, r.lending_limit) for r in snapshot.queues}


def test_the_month_is_the_time_weighted_average_over_replicas_and_restarts(
    prometheus: str,
) -> None:
    got = _history(prometheus, "east")
    assert got["cq-research"] == pytest.approx((RESEARCH, RESEARCH), rel=1e-12)
    assert got["cq-vision"] == pytest.approx((1.0, 0.0))
    assert got["cq-search"] == pytest.approx((1.0, 1.0))  # no limit: the nominal quota
    assert set(got) == {"cq-research", "cq-vision", "cq-search"}


def test_several_clusters_need_a_selector_and_bad_values_refuse(prometheus: str) -> None:
    with pytest.raises(UpstreamPayloadError, match=r"several clusters .*report.prometheus.cluster"):
        _history(prometheus, None)
    assert _history(prometheus, "west") == {"cq-research": (8.0, 8.0)}
    for cluster in ("nan", "neg"):
        with pytest.raises(UpstreamPayloadError, match="not billed on"):
            _history(prometheus, cluster)
    with pytest.raises(UpstreamPayloadError, match="no chargeback_quota_nominal series"):
        _history(prometheus, 'no "such" cluster')


def _write(stack: DemoStack, tmp_path: Path, prometheus: dict[str, Any] | None) -> str:
    data = demo_config_dict(stack.urls, str(stack.secrets))
    if prometheus is not None:
        data["report"] = {"prometheus": prometheus}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


def _report(path: str, fmt: str, clock: Any, capsys: pytest.CaptureFixture[str]) -> str:
    assert (
        main(["report", "--config.file", path, "--format", fmt, "--month", "2026-10"], clock) == 0
    )
    return capsys.readouterr().out


def test_the_report_bills_the_history_says_so_and_prints_the_same_bytes(
    prometheus: str, stack: DemoStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(stack, tmp_path, {"url": prometheus, "cluster": "east"})
    for fmt in ("table", "json", "focus"):
        assert _report(path, fmt, CLOCK, capsys) == _report(path, fmt, LATER, capsys)
    history = json.loads(_report(path, "json", CLOCK, capsys))
    assert history["quota_basis"] == "prometheus"
    assert "time-weighted average" in _report(path, "table", CLOCK, capsys)
    assert "time-weighted average" in _report(path, "html", CLOCK, capsys)
    assert {"prometheus"} == {
        line.split(",")[-2] for line in _report(path, "focus", CLOCK, capsys).splitlines()[1:]
    }
    kueue = json.loads(_report(_write(stack, tmp_path, None), "json", CLOCK, capsys))
    assert kueue["quota_basis"] == "kueue_now"

    def borrowed(report: dict[str, Any]) -> float:
        research = next(t for t in report["teams"] if t["team"] == "research")
        return float(research["components"].get("borrowed", 0.0))

    # With 3.03 GPUs of quota on average rather than Kueue's 2 now, research borrows less.
    assert borrowed(history) < borrowed(kueue)
    assert history["total"] == kueue["total"]  # quota moves money between teams only


def test_an_unreachable_prometheus_fails_the_report(
    stack: DemoStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(stack, tmp_path, {"url": "http://127.0.0.1:9", "timeout": "2s"})
    assert main(["report", "--config.file", path, "--month", "2026-10"], CLOCK) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "error: report.prometheus:" in captured.err

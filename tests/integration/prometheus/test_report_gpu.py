"""A closed month's GPU operation read back from a real Prometheus holding a backfilled month."""

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
from exporter.cli import PUBLISHED_GPU_SERIES, main
from exporter.config.schema import Config
from exporter.errors import UpstreamPayloadError
from exporter.sources.gpu_history import gpu_history
from tests.conftest import CLOCK
from tests.support.backfill import backfilled_prometheus

pytestmark = pytest.mark.skipif(shutil.which("promtool") is None, reason="needs promtool")

# October 2026 in Madrid: [30 Sep 22:00 UTC, 31 Oct 23:00 UTC), 745 hours (summer time ends).
START, END = datetime(2026, 9, 30, 22, tzinfo=UTC), datetime(2026, 10, 31, 23, tzinfo=UTC)
HALF = datetime(2026, 10, 15, 22, tzinfo=UTC)  # 360 h in
STEP = timedelta(minutes=5)
GPU, FLAVOR = "nvidia.com/gpu", CLUSTER.gpu_flavor
SERIES = PUBLISHED_GPU_SERIES


def _samples(metric: str, labels: str, value: Any, end: datetime = END) -> list[str]:
    out, t = [], START
    while t < end:
        v = value(t) if callable(value) else value
        out.append(f"{metric}{{{labels}}} {v} {int(t.timestamp())}")
        t += STEP
    return out


def _openmetrics() -> str:
    after = END + timedelta(hours=2)  # the next month's samples must not count
    lines: list[str] = []
    for pod in ("a", "b"):  # an HA pair: both replicas publish the same figures
        east = f'cluster="east",instance="{pod}:9860",pod="{pod}"'
        # research holds 2 idle GPUs for the first 360 h, 1 for the other 385 h: 1,105 GPU-hours.
        idle = lambda t: 2 if t < HALF else (1 if t < END else 50)  # noqa: E731
        lines += _samples("chargeback_gpus", f'{east},team="research",state="idle"', idle, after)
        lines += _samples("chargeback_gpus", f'{east},team="research",state="busy"', 3)
        lines += _samples("chargeback_gpus", f'{east},team="vision",state="idle"', 0.5)
        use = lambda t: 0.2 if t < HALF else 0.6  # noqa: E731
        lines += _samples("chargeback_team_gpu_utilization_ratio", f'{east},team="research"', use)
        # 2.8 kWh an hour x 745 h = 2,086 kWh; at 250 g a kWh, 700 g an hour = 521.5 kg.
        lines += _samples("chargeback_team_gpu_energy_kwh_per_hour", f'{east},team="research"', 2.8)
        lines += _samples("chargeback_team_gpu_co2e_grams_per_hour", f'{east},team="research"', 700)
        # Build or buy: utilisation 0.40 x ratio 0.125 = 0.05 at break-even.
        model = f'{east},model="llama-3-70b"'
        lines += _samples("chargeback_llm_break_even_utilization_ratio", model, 0.05)
        lines += _samples("chargeback_llm_break_even_ratio", model, 0.125)
        # The month's quota, which a closed month's report with report.prometheus bills on.
        for queue, gpus in (("cq-research", 2), ("cq-vision", 1), ("cq-search", 1)):
            quota = f'{east},cluster_queue="{queue}",cohort="gpu-pool",flavor="{FLAVOR}"'
            lines += _samples("chargeback_quota_nominal", f'{quota},resource="{GPU}"', gpus)
    lines += _samples("chargeback_gpus", 'cluster="west",team="x",state="idle"', 1)
    lines += _samples("chargeback_gpus", 'cluster="nan",team="x",state="idle"', "NaN")
    types = sorted({line.split("{")[0] for line in lines})
    return "\n".join([*(f"# TYPE {t} gauge" for t in types), *_grouped(lines), "# EOF", ""])


def _grouped(lines: list[str]) -> list[str]:
    # OpenMetrics wants each family's samples together, after its TYPE line.
    return sorted(lines, key=lambda line: line.split("{")[0])


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Prometheus whose only data is a backfilled October of GPU series."""
    with backfilled_prometheus(tmp_path_factory.mktemp("gpu-history"), _openmetrics()) as url:
        yield url


def _read(url: str, cluster: str | None) -> Any:
    prom: dict[str, Any] = {"url": url} | ({"cluster": cluster} if cluster else {})
    config = Config.model_validate({"timezone": "Europe/Madrid", "report": {"prometheus": prom}})
    assert config.report.prometheus is not None
    return gpu_history(config.report.prometheus, "config.yaml", (START, END), SERIES)


def test_the_month_is_summed_over_the_minutes_replicas_folded(prometheus: str) -> None:
    month = _read(prometheus, "east")
    research = month.team("research")
    assert research.idle_gpu_hours == pytest.approx(2 * 360 + 1 * 385)
    # Minutes weigh alike: (0.2 x 360 + 0.6 x 385) / 745.
    assert research.utilisation == pytest.approx((0.2 * 360 + 0.6 * 385) / 745)
    assert research.kwh == pytest.approx(2.8 * 745)
    assert research.co2e_grams == pytest.approx(700 * 745)
    assert month.team("vision").idle_gpu_hours == pytest.approx(0.5 * 745)
    assert month.team("vision").kwh is None
    assert month.serving_utilisation == pytest.approx({"llama-3-70b": 0.40})


def test_several_clusters_need_a_selector_and_bad_values_refuse(prometheus: str) -> None:
    with pytest.raises(UpstreamPayloadError, match="several clusters"):
        _read(prometheus, None)
    assert _read(prometheus, "west").team("x").idle_gpu_hours == pytest.approx(745)
    with pytest.raises(UpstreamPayloadError, match="nan"):
        _read(prometheus, "nan")


def _report(
    stack: DemoStack,
    tmp_path: Path,
    prom: dict[str, Any] | None,
    fmt: str,
    capsys: pytest.CaptureFixture[str],
) -> str:
    data = demo_config_dict(stack.urls, str(stack.secrets))
    if prom is not None:
        data["report"] = {"prometheus": prom}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    args = ["report", "--config.file", str(path), "--format", fmt, "--month", "2026-10"]
    assert main(args, CLOCK) == 0
    return capsys.readouterr().out


def test_a_closed_month_prints_its_idle_gpu_hours_energy_and_co2e(
    prometheus: str, stack: DemoStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prom = {"url": prometheus, "cluster": "east"}
    data = json.loads(_report(stack, tmp_path, prom, "json", capsys))
    research = next(t for t in data["teams"] if t["team"] == "research")
    assert research["idle_gpu_hours"] == pytest.approx(1105)
    operation = data["gpu_operation"]
    assert operation["basis"] == "the exporter's own series in report.prometheus"
    row = next(t for t in operation["teams"] if t["team"] == "research")
    assert (row["energy_kwh"], row["co2e_grams"]) == pytest.approx((2086.0, 521_500.0))
    (even,) = data["unit_economics"]["build_or_buy"]["models"]
    assert even["utilisation"] == pytest.approx(0.40)
    text = _report(stack, tmp_path, prom, "table", capsys)
    line = next(ln for ln in text.splitlines() if ln.startswith("research") and "521,50" in ln)
    # (0.2 x 360 + 0.6 x 385) / 745 = 40.7 % utilisation; the demo prints in es-ES.
    assert line.split()[-5:] == ["1.105,00", "40,7", "%", "2.086,00", "521,50"]
    html = _report(stack, tmp_path, prom, "html", capsys)
    assert "GPU operation, closed month (from the exporter" in html
    # Without any history the report and the statement say so in words.
    plain = _report(stack, tmp_path, None, "table", capsys)
    assert "DCGM read directly keeps no history" in plain
    assert "DCGM read directly keeps no history" in _report(stack, tmp_path, None, "html", capsys)

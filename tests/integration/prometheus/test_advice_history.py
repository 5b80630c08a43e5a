"""The advice's history read against a real Prometheus holding a week of the demo's DCGM
series: its PromQL runs, and the demo's search vLLM gets the advice docs/advice.md works."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from chargeback_demo.advice_history import dcgm_openmetrics
from chargeback_demo.cluster import CLUSTER
from chargeback_demo.history import RETENTION, backfill
from chargeback_demo.prometheus import start_prometheus, stop, wait_ready
from chargeback_demo.stack import demo_config_dict
from exporter.config.schema import Config
from exporter.ledger.advice import AdviceSet
from exporter.ledger.advice.priced import team_advice
from exporter.ledger.attribution import Attributor
from exporter.ledger.prices.applied import applied_prices
from exporter.ledger.units.economics import price_builds
from exporter.sources.dcgm_history import source
from exporter.sources.dcgm_history.records import History
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots

pytestmark = pytest.mark.skipif(
    shutil.which("promtool") is None or shutil.which("prometheus") is None,
    reason="needs promtool and prometheus",
)

END = datetime(2026, 11, 15, 12, tzinfo=UTC)
H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("advice")
    backfill(work, dcgm_openmetrics(CLUSTER, END, "127.0.0.1:9400"), work / "data")
    proc, url = start_prometheus(work, targets=[], extra_args=[RETENTION])
    try:
        wait_ready(proc, f"{url}/-/ready")
        yield url
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def read(prometheus: str) -> tuple[Config, History]:
    urls = {"opencost": "http://127.0.0.1:1"}
    config = Config.model_validate(demo_config_dict(urls, dcgm_prometheus=prometheus))
    reader = source.open_reader(config, "config")
    assert reader is not None
    try:
        window = reader.read(Reading.open(END, ZoneInfo("UTC")))
    finally:
        reader.close()
    assert isinstance(window, History)
    return config, window


def _advice(config: Config, window: History) -> AdviceSet:
    builds = price_builds(config, Snapshots())
    prices = applied_prices(config, None, builds, [H100], {})
    found = team_advice(config, Attributor(config), window, prices)
    assert found is not None
    return found


def test_a_week_of_every_held_gpu_is_read(read: tuple[Config, History]) -> None:
    _, window = read
    pods = {d.workload for d in window.devices}
    assert "ns-search/vllm-llama-0" in pods
    assert {d.model for d in window.devices} == {H100}
    assert window.dropped == {}
    vllm = next(d for d in window.devices if d.pod == "vllm-llama-0")
    assert vllm.framebuffer is not None and vllm.activity is not None
    # Every 5 minutes for a week, as backfilled; the fake wobbles 10 % around 2 %.
    assert 2015 <= vllm.framebuffer.samples <= 2017
    assert 0.018 <= vllm.activity.p50 <= vllm.activity.max <= 0.0221
    assert 18_900 <= vllm.framebuffer.max <= 19_101
    assert vllm.idle_share == 1.0


def test_the_demo_vllm_fits_3g_40gb_and_is_idle(read: tuple[Config, History]) -> None:
    advice = _advice(*read)
    search = {(a.kind, a.action): round(a.saving, 2) for a in advice.advice if a.team == "search"}
    # 19,100 MiB over 0.8 is 25 GB: 3g.40gb; (1 - 3/7) x 730 h x 1.40 = 584.00.
    assert search == {("mig", "fits 3g.40gb"): 584.0, ("idle", "release the GPU"): 1022.0}
    # The busy workloads fit nothing smaller and are not idle.
    assert {a.team for a in advice.advice} == {"search"}

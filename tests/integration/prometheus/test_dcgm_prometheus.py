"""DCGM through a real Prometheus: the fake dcgm-exporter's utilisation, the month's idle hours."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_dcgm import FakeDcgmOptions
from chargeback_demo.fake_dcgm import make_handler as dcgm_handler
from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer, text_response
from chargeback_demo.prometheus import start_prometheus, stop, wait_ready
from exporter.config.schema import Config, DcgmPrometheus
from exporter.ledger.prices.build import measured_watts
from exporter.sources.checks import Tally
from exporter.sources.dcgm.idle import pieces, read_idle_hours
from exporter.sources.dcgm.prometheus import group_labels
from exporter.sources.dcgm.source import KIND, build_client
from exporter.sources.reading import Reading
from tests.conftest import CLOCK, FIXED_NOW
from tests.support.prometheus_api import poll, query


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[str]:
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus is not installed (make test installs it)")
    options = FakeDcgmOptions(pod_labels=True)
    dcgm = FakeServer(dcgm_handler(CLUSTER, CLOCK, options)).start()
    target = dcgm.url.removeprefix("http://")
    proc, url = start_prometheus(tmp_path / "prom", targets=[target], job="dcgm", interval="1s")
    try:
        wait_ready(proc, url)
        yield url
    finally:
        stop(proc)
        dcgm.stop()


def test_utilisation_through_a_real_prometheus(prometheus: str) -> None:
    # Enough scrapes for avg_over_time to have several points of every GPU.
    poll(
        "three scrapes of every GPU",
        lambda: (
            len(query(prometheus, "count_over_time(DCGM_FI_DEV_GPU_UTIL[1m]) >= 3"))
            == CLUSTER.gpu_count
        ),
        60.0,
    )
    # Prometheus's own clock, so the test reads no wall clock of its own.
    (now_sample,) = query(prometheus, "vector(time())")
    now = datetime.fromtimestamp(float(now_sample["value"][1]), tz=UTC)
    config = Config.model_validate(
        {
            "sources": {
                "dcgm": {
                    # A static scrape has no target pod labels: dcgm-exporter's own are kept.
                    "prometheus": {"url": prometheus, "window": "1m", "workload_labels": "plain"}
                }
            }
        }
    )
    assert config.sources.dcgm is not None
    with build_client(config.sources.dcgm) as client:
        snapshot = KIND.fetch_from_config(client, config, Reading.open(now, config.zone))
    assert len(snapshot.gpus) == CLUSTER.gpu_count
    assert snapshot.dropped == {}
    held = {g.gpu: g for g in snapshot.gpus if g.allocated}
    for index in range(CLUSTER.gpu_count):
        holder = CLUSTER.gpu_holder(index, FIXED_NOW)
        record = next(g for g in snapshot.gpus if g.gpu == str(index))
        if holder is None:
            assert not record.allocated
            continue
        assert (record.namespace, record.pod) == (holder.namespace, holder.pod)
        # The fake's engine activity is constant at FIXED_NOW: its mean is that value.
        assert record.utilisation == pytest.approx(holder.utilisation_at(FIXED_NOW), abs=1e-6)
        # Only the pod labels attribution reads (team_label_keys: team) are kept.
        assert record.labels == ({"team": holder.labels["team"]} if "team" in holder.labels else {})
    assert held, "the demo cluster holds GPUs at FIXED_NOW"
    # The month so far has only seconds of history here, maybe no 5 m step at all: a pod is
    # absent until a step sees it; then the busy pods' idle hours are 0 and the idle one's whole
    # steps (test_idle_hours_through_a_real_prometheus has figures).
    assert snapshot.idle_hours is not None
    idle = {entry.pod: entry.hours for entry in snapshot.idle_hours}
    assert set(idle) <= {g.pod for g in held.values()}
    for record in held.values():
        steps = idle.get(record.pod, 0.0) * 12
        assert steps == pytest.approx(round(steps))
        if record.utilisation is not None and record.utilisation >= 0.05:
            assert steps == 0


# --- month-to-date idle hours through a real Prometheus ------------------------------------

_H = 'modelName="NVIDIA H100 80GB HBM3",Hostname="n9"'
# Written by hand, unlike the fake cluster: a GPU time-sliced by two pods, a MIG GPU carved
# into an idle and a busy instance, a GPU nobody holds, and a card without profiling metrics.
_IDLE_EXPOSITION = f"""\
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{{gpu="0",UUID="GPU-a",{_H},namespace="ns-a",pod="a"}} 0.01
DCGM_FI_PROF_GR_ENGINE_ACTIVE{{gpu="0",UUID="GPU-a",{_H},namespace="ns-b",pod="b"}} 0.02
DCGM_FI_PROF_GR_ENGINE_ACTIVE{{gpu="1",UUID="GPU-b",{_H},GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",\
namespace="ns-c",pod="c"}} 0
DCGM_FI_PROF_GR_ENGINE_ACTIVE{{gpu="1",UUID="GPU-b",{_H},GPU_I_PROFILE="4g.40gb",GPU_I_ID="2",\
namespace="ns-d",pod="d"}} 0.9
DCGM_FI_PROF_GR_ENGINE_ACTIVE{{gpu="2",UUID="GPU-c",{_H}}} 0
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{{gpu="0",UUID="GPU-a",{_H},namespace="ns-a",pod="a"}} 1
DCGM_FI_DEV_GPU_UTIL{{gpu="0",UUID="GPU-a",{_H},namespace="ns-b",pod="b"}} 2
DCGM_FI_DEV_GPU_UTIL{{gpu="3",UUID="GPU-d",modelName="Tesla T4",Hostname="n9",\
namespace="ns-e",pod="e"}} 2
"""


@pytest.fixture
def idle_prometheus(tmp_path: Path) -> Iterator[str]:
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus is not installed (make test installs it)")

    def handle(request: FakeRequest) -> FakeResponse:
        return text_response(200, _IDLE_EXPOSITION, "text/plain; version=0.0.4")

    target = FakeServer(handle).start()
    proc, url = start_prometheus(
        tmp_path / "prom", targets=[target.url.removeprefix("http://")], interval="1s"
    )
    try:
        wait_ready(proc, url)
        yield url
    finally:
        stop(proc)
        target.stop()


def test_idle_hours_through_a_real_prometheus(idle_prometheus: str) -> None:
    poll(
        "a dozen scrapes",
        lambda: query(idle_prometheus, 'count_over_time(DCGM_FI_DEV_GPU_UTIL{pod="e"}[1m]) >= 12'),
        60.0,
    )
    (now_sample,) = query(idle_prometheus, "vector(time())")
    now = datetime.fromtimestamp(float(now_sample["value"][1]), tz=UTC)
    # Every series was scraped before the span starts, so each 1 s step in it sees them all.
    span = (now - timedelta(seconds=10), now)
    step = timedelta(seconds=1)
    labels = group_labels(DcgmPrometheus(url=idle_prometheus, workload_labels="plain"), ())
    tally = Tally()
    with httpx.Client(base_url=idle_prometheus) as client:
        idle = read_idle_hours(client, labels, 0.05, step, span, tally)
    steps = sum(piece.steps(1000) for piece in pieces(*span))
    assert steps == 10
    got = {entry.pod: entry.hours * 3600 for entry in idle}
    # Time-sliced: half a GPU each; the 3g instance is 3/7 of one; the busy 4g counts 0; the T4
    # has no engine activity, so GPU_UTIL 2 % < 5 %; the GPU nobody holds is not waste.
    assert got == pytest.approx({"a": 5.0, "b": 5.0, "c": 30 / 7, "d": 0.0, "e": 10.0})
    assert {e.pod: e.model for e in idle}["e"] == "Tesla T4"
    assert tally == {}


# --- a dropped power sample through a real Prometheus ----------------------------------------


@pytest.fixture
def nan_power_prometheus(tmp_path: Path) -> Iterator[str]:
    """Prometheus scraping the fake dcgm-exporter whose GPU 2 reports its power as NaN."""
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus is not installed (make test installs it)")
    inner = dcgm_handler(CLUSTER, CLOCK, FakeDcgmOptions(pod_labels=True))

    def handle(request: FakeRequest) -> FakeResponse:
        answer = inner(request)
        if request.path != "/metrics":
            return answer
        lines = [
            line.rsplit(" ", 1)[0] + " NaN"
            if line.startswith('DCGM_FI_DEV_POWER_USAGE{gpu="2",')
            else line
            for line in answer.body.decode().split("\n")
        ]
        return text_response(200, "\n".join(lines), "text/plain; version=0.0.4")

    dcgm = FakeServer(handle).start()
    target = dcgm.url.removeprefix("http://")
    proc, url = start_prometheus(tmp_path / "prom", targets=[target], job="dcgm", interval="1s")
    try:
        wait_ready(proc, url)
        yield url
    finally:
        stop(proc)
        dcgm.stop()


def test_a_nan_power_sample_through_prometheus_is_that_gpus_power_unknown(
    nan_power_prometheus: str,
) -> None:
    url = nan_power_prometheus
    poll(
        "a scrape of every GPU's power",
        lambda: len(query(url, "DCGM_FI_DEV_POWER_USAGE")) == CLUSTER.gpu_count,
        60.0,
    )
    (now_sample,) = query(url, "vector(time())")
    now = datetime.fromtimestamp(float(now_sample["value"][1]), tz=UTC)
    prometheus = {"url": url, "window": "1m", "workload_labels": "plain"}
    config = Config.model_validate({"sources": {"dcgm": {"prometheus": prometheus}}})
    assert config.sources.dcgm is not None
    with build_client(config.sources.dcgm) as client:
        snapshot = KIND.fetch_from_config(client, config, Reading.open(now, config.zone))
    power = {g.gpu: (g.power_watts is not None, g.power_corrupt) for g in snapshot.gpus}
    assert power == {"0": (True, ""), "1": (True, ""), "2": (False, "non_finite"), "3": (True, "")}
    assert snapshot.dropped == {"non_finite": 1}
    # The model's measured mean is unknown, not the mean of the three left.
    assert measured_watts(snapshot.gpus) == {"nvidia-h100-80gb-hbm3": None}

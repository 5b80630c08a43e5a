"""DCGM through Prometheus: the query, its envelope, value checks, and a real Prometheus."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_dcgm import FakeDcgmOptions
from chargeback_demo.fake_dcgm import make_handler as dcgm_handler
from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer, text_response
from chargeback_demo.prometheus import start_prometheus, stop, wait_ready
from exporter.config.schema import Config, DcgmPrometheus
from exporter.errors import UpstreamIncomplete, UpstreamPayloadError, UpstreamStatusError
from exporter.sources.checks import Tally
from exporter.sources.dcgm.idle import pieces, read_idle_hours
from exporter.sources.dcgm.prometheus import group_labels
from exporter.sources.dcgm.source import build_client, fetch
from tests.conftest import CLOCK, FIXED_NOW
from tests.support.prometheus_api import poll, query

H100 = "NVIDIA H100 80GB HBM3"


def _config(**prometheus: Any) -> Config:
    section = {"url": "http://prometheus.invalid:9090", **prometheus}
    return Config.model_validate({"sources": {"dcgm": {"prometheus": section}}})


def _vector(*samples: tuple[dict[str, str], str]) -> dict[str, Any]:
    result = [{"metric": m, "value": [1_763_209_800.123, v]} for m, v in samples]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


def _serve(answer: Callable[[httpx.Request], httpx.Response], config: Config) -> Callable[[], Any]:
    assert config.sources.dcgm is not None
    transport = httpx.MockTransport(answer)
    client = build_client(config.sources.dcgm, transport=transport)
    return lambda: fetch(client, config, FIXED_NOW)


def _gpu(gpu: str, **labels: str) -> dict[str, str]:
    return {"gpu": gpu, "UUID": f"GPU-{gpu}", "modelName": H100, "Hostname": "n1", **labels}


def test_the_query_averages_over_the_cost_window_at_now() -> None:
    seen: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        ratio = "GR_ENGINE_ACTIVE" in request.url.params["query"]
        return httpx.Response(200, json=_vector((_gpu("0"), "0.4" if ratio else "40")))

    opencost = {"opencost": {"url": "http://oc.invalid:9003", "rate_window": "2h"}}
    config = Config.model_validate(
        {
            "sources": {"dcgm": {"prometheus": {"url": "http://p.invalid:9090/"}}, **opencost},
            "attribution": {"team_label_keys": ["app.kubernetes.io/team", "team"]},
        }
    )
    _serve(answer, config)()
    assert {u.path for u in seen} == {"/api/v1/query"}
    # The two utilisation queries come first; the month's idle queries follow (test_dcgm_idle).
    seen = [u for u in seen if "avg_over_time" in u.params["query"]]
    exprs = [u.params["query"] for u in seen]
    assert len(exprs) == 2
    assert exprs[0].startswith("avg by (gpu, UUID, uuid, modelName, Hostname, hostname,")
    assert "avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE[2h])" in exprs[0]
    assert "avg_over_time(DCGM_FI_DEV_GPU_UTIL[2h])" in exprs[1]
    # The workload is read from exported_*: plain pod/namespace name the exporter's own pod.
    assert "exported_pod" in exprs[0] and " pod," not in exprs[0]
    # Attribution's pod label keys, sanitised the way dcgm-exporter names them.
    assert "app_kubernetes_io_team" in exprs[0] and "team)" in exprs[0]
    assert {u.params["time"] for u in seen} == {f"{FIXED_NOW.timestamp():.3f}"}


def test_values_are_checked_and_bad_ones_dropped_and_counted() -> None:
    util = [
        (_gpu("0", exported_pod="p0", exported_namespace="ns-a"), "87.5"),
        (_gpu("1"), "0"),
        (_gpu("2", exported_pod="p2", exported_namespace="ns-a"), "NaN"),
        (_gpu("3", exported_pod="p3", exported_namespace="ns-a"), "-1"),
        (_gpu("4", exported_pod="p4", exported_namespace="ns-b"), "100.5"),
        (_gpu("5", exported_pod="p5", exported_namespace="ns-b"), "+Inf"),
    ]
    rng = random.Random(3)

    def answer(request: httpx.Request) -> httpx.Response:
        expr = request.url.params["query"]
        if "DCGM_FI_DEV_GPU_UTIL" not in expr or "sum_over_time" in expr:
            return httpx.Response(200, json=_vector())  # no profiling metrics, no idle steps
        shuffled = list(util)
        rng.shuffle(shuffled)  # Prometheus promises no order
        return httpx.Response(200, text=json.dumps(_vector(*shuffled)))

    snapshot = _serve(answer, _config())()
    got = {g.gpu: g for g in snapshot.gpus}
    assert set(got) == {"0", "1"}
    assert got["0"].utilisation == pytest.approx(0.875)
    assert (got["0"].namespace, got["0"].pod) == ("ns-a", "p0")
    assert not got["1"].allocated
    assert snapshot.dropped == {"non_finite": 2, "out_of_range": 2}


def test_mig_instances_come_from_engine_activity() -> None:
    mig = {
        "GPU_I_PROFILE": "3g.40gb",
        "GPU_I_ID": "1",
        "exported_pod": "p",
        "exported_namespace": "a",
    }

    def answer(request: httpx.Request) -> httpx.Response:
        if "GR_ENGINE_ACTIVE" in request.url.params["query"]:
            return httpx.Response(200, json=_vector((_gpu("0", **mig), "0.25")))
        return httpx.Response(200, json=_vector())

    snapshot = _serve(answer, _config())()
    shares = sorted((g.mig_instance, round(g.share, 4)) for g in snapshot.gpus)
    assert shares == [("1", round(3 / 7, 4)), ("unsliced", round(4 / 7, 4))]


@pytest.mark.parametrize(
    ("status", "body", "error", "text"),
    [
        (
            400,
            {"status": "error", "errorType": "bad_data", "error": "parse error at char 3"},
            UpstreamStatusError,
            "parse error at char 3",
        ),
        (
            503,
            {"status": "error", "errorType": "timeout", "error": "query timed out"},
            UpstreamStatusError,
            "query timed out",
        ),
        (
            200,
            {"status": "error", "errorType": "execution", "error": "many-to-many matching"},
            UpstreamPayloadError,
            "execution: many-to-many matching",
        ),
        (
            200,
            {"status": "success", "data": {"resultType": "matrix", "result": []}},
            UpstreamPayloadError,
            "instant vector",
        ),
        (
            200,
            {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}}]}},
            UpstreamPayloadError,
            "malformed",
        ),
    ],
)
def test_error_envelopes_fail_the_refresh(
    status: int, body: dict[str, Any], error: type[Exception], text: str
) -> None:
    fetch_once = _serve(lambda request: httpx.Response(status, json=body), _config())
    with pytest.raises(error, match=text):
        fetch_once()


def test_no_series_at_all_is_incomplete_not_a_cluster_without_gpus() -> None:
    fetch_once = _serve(lambda request: httpx.Response(200, json=_vector()), _config())
    with pytest.raises(UpstreamIncomplete, match="no DCGM utilisation series"):
        fetch_once()


# --- a real Prometheus scraping the fake dcgm-exporter -------------------------------------


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
        snapshot = fetch(client, config, now)
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

"""The history read over Prometheus's query API: spreads per device and queue, bad series."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from exporter.config.advice import AdviceConfig
from exporter.config.schema import Config, DcgmPrometheus, ReportPrometheus
from exporter.errors import UpstreamError, UpstreamPayloadError
from exporter.exposition.catalogue.quota import QUOTA_NOMINAL, QUOTA_USAGE
from exporter.serve.snapshot import Audited
from exporter.sources.dcgm_history import queries
from exporter.sources.dcgm_history.source import AdviceShared, fetch, open_reader
from exporter.sources.deadline import Backoff, RetryPolicy
from exporter.sources.reading import Reading

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)
H100 = {"gpu": "3", "UUID": "GPU-3", "modelName": "NVIDIA H100 80GB HBM3", "Hostname": "n1"}
# Another spelling dcgm-exporter has used: lower-case hostname and uuid.
A100 = {"gpu": "0", "uuid": "GPU-0", "modelName": "NVIDIA A100-SXM4-40GB", "hostname": "n2"}
VLLM = {"exported_namespace": "ns-search", "exported_pod": "vllm-0", "team": "search"}
NOTEBOOK = {"exported_namespace": "ns-lab", "exported_pod": "nb-1"}
WEEK = 2016


def _stat(expr: str) -> str:
    if "quantile_over_time(0.50" in expr:
        return "p50"
    if "quantile_over_time(0.95" in expr:
        return "p95"
    if expr.startswith("max_over_time"):
        return "max"
    if expr.startswith("count_over_time"):
        return "samples"
    if "< bool" in expr:
        return "idle"
    if "resets(" in expr:
        return "resets"
    return "mean"


DEVICES: dict[tuple[str, str], list[tuple[dict[str, str], str]]] = {
    (queries.FB_USED, "p50"): [({**H100, **VLLM}, "7000"), ({**A100, **NOTEBOOK}, "NaN")],
    (queries.FB_USED, "p95"): [({**A100, **NOTEBOOK}, "900"), ({**H100, **VLLM}, "7200")],
    (queries.FB_USED, "max"): [({**H100, **VLLM}, "7500"), ({**A100, **NOTEBOOK}, "1000")],
    (queries.FB_USED, "samples"): [({**H100, **VLLM}, "2016"), ({**A100, **NOTEBOOK}, "12")],
    # The H100 has engine activity; the A100 only GPU_UTIL, in percent.
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "p50"): [({**H100, **VLLM}, "0.02")],
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "p95"): [({**H100, **VLLM}, "0.02")],
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "max"): [({**H100, **VLLM}, "0.03")],
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "samples"): [({**H100, **VLLM}, "2016")],
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "idle"): [({**H100, **VLLM}, "1")],
    ("DCGM_FI_DEV_GPU_UTIL", "p50"): [({**A100, **NOTEBOOK}, "10"), ({**H100, **VLLM}, "2")],
    ("DCGM_FI_DEV_GPU_UTIL", "p95"): [({**A100, **NOTEBOOK}, "40")],
    ("DCGM_FI_DEV_GPU_UTIL", "max"): [({**A100, **NOTEBOOK}, "60")],
    ("DCGM_FI_DEV_GPU_UTIL", "samples"): [({**A100, **NOTEBOOK}, "12")],
    ("DCGM_FI_DEV_GPU_UTIL", "idle"): [({**A100, **NOTEBOOK}, "0.25")],
    (queries.ENERGY, "resets"): [({"gpu": "0", "uuid": "GPU-0", "hostname": "n2"}, "1")],
}


def _metric(expr: str) -> str:
    for name in (*(k[0] for k in DEVICES), QUOTA_NOMINAL.name, QUOTA_USAGE.name):
        if name in expr:
            return name
    raise AssertionError(expr)


def handler(
    extra: dict[tuple[str, str], list[tuple[dict[str, str], str]]],
    seen: list[str],
) -> Callable[[httpx.Request], httpx.Response]:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/v1/query"
        expr = request.url.params["query"]
        seen.append(expr)
        assert float(request.url.params["time"]) == NOW.timestamp()
        rows = {**DEVICES, **extra}.get((_metric(expr), _stat(expr)), [])
        result: list[dict[str, Any]] = [
            {"metric": labels, "value": [NOW.timestamp(), value]} for labels, value in rows
        ]
        body = {"status": "success", "data": {"resultType": "vector", "result": result}}
        return httpx.Response(200, content=json.dumps(body).encode())

    return answer


def read(
    extra: dict[tuple[str, str], list[tuple[dict[str, str], str]]] | None = None,
    *,
    quota: bool = False,
) -> tuple[Any, list[str]]:
    seen: list[str] = []
    transport = httpx.MockTransport(handler(extra or {}, seen))

    def client() -> httpx.Client:
        return httpx.Client(base_url="http://prom:9090", transport=transport)

    shared = AdviceShared(
        DcgmPrometheus(url="http://prom:9090"),
        0.05,
        ("team",),
        ReportPrometheus(url="http://prom:9090") if quota else None,
        client if quota else None,
    )
    reading = Reading.open(NOW, ZoneInfo("UTC"))
    with client() as c:
        return fetch(c, AdviceConfig(), shared, reading), seen


def test_spreads_per_device_engine_activity_first_util_in_percent_else() -> None:
    history, seen = read()
    assert history.window_seconds == timedelta(days=7).total_seconds()
    assert history.queues is None
    assert len(seen) == 15
    (vllm, nb) = history.devices
    assert (vllm.workload, vllm.model, vllm.pod_labels) == (
        "ns-search/vllm-0",
        "NVIDIA H100 80GB HBM3",
        (("team", "search"),),
    )
    assert vllm.framebuffer is not None and vllm.activity is not None
    assert (vllm.framebuffer.max, vllm.framebuffer.samples) == (7500.0, WEEK)
    assert (vllm.activity.max, vllm.idle_share, vllm.gpu_resets) == (0.03, 1.0, 0)
    # Only GPU_UTIL: read in percent, handed on as a share; its reset is carried.
    assert nb.activity is not None and nb.framebuffer is not None
    assert (nb.activity.p95, nb.activity.max, nb.idle_share) == (0.4, 0.6, 0.25)
    assert nb.framebuffer.p50 != nb.framebuffer.p50  # NaN kept for the advice to refuse
    assert nb.gpu_resets == 1


def test_series_nobody_held_are_skipped_and_unlabelled_ones_counted() -> None:
    extra = {
        (queries.FB_USED, "max"): [
            ({**H100, **VLLM}, "7500"),
            (H100, "100"),  # no pod: unallocated
            ({"modelName": "x", **VLLM}, "5"),  # no gpu label
        ],
        (queries.FB_USED, "p50"): [({"modelName": "x", **VLLM}, "5")],  # the same, once
    }
    history, _ = read(extra)
    assert [d.pod for d in history.devices] == ["vllm-0", "nb-1"]
    assert history.dropped == {"missing_field": 1}
    assert isinstance(history, Audited)  # the refresher counts its drops


def test_quota_history_reads_mean_nominal_and_use() -> None:
    queue = {"cluster_queue": "cq-search", "flavor": "h100", "resource": "nvidia.com/gpu"}
    extra = {
        (QUOTA_NOMINAL.name, "mean"): [(queue, "4")],
        (QUOTA_USAGE.name, "p50"): [(queue, "1")],
        (QUOTA_USAGE.name, "p95"): [(queue, "1.4")],
        (QUOTA_USAGE.name, "max"): [(queue, "1.4")],
        (QUOTA_USAGE.name, "samples"): [(queue, "2016")],
    }
    history, seen = read(extra, quota=True)
    (q,) = history.queues
    assert (q.cluster_queue, q.nominal, q.usage.max, q.usage.samples) == (
        "cq-search",
        4.0,
        1.4,
        WEEK,
    )
    assert all('resource="nvidia.com/gpu"' in e for e in seen if "chargeback_quota" in e)


def test_a_quota_series_without_its_queue_refuses_the_read() -> None:
    extra = {(QUOTA_NOMINAL.name, "mean"): [({"flavor": "h100"}, "4")]}
    with pytest.raises(UpstreamPayloadError, match="queue labels"):
        read(extra, quota=True)


def test_query_names_are_the_catalogues() -> None:
    assert (QUOTA_NOMINAL.name, QUOTA_USAGE.name) == (queries.QUOTA_NOMINAL, queries.QUOTA_USAGE)


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (503, b'{"status":"error","errorType":"unavailable","error":"down"}', UpstreamError),
        (
            200,
            b'{"status":"error","errorType":"execution","error":"too many samples"}',
            UpstreamPayloadError,
        ),
        (
            200,
            b'{"status":"success","data":{"resultType":"matrix","result":[]}}',
            UpstreamPayloadError,
        ),
    ],
)
def test_a_failing_prometheus_fails_the_read_alone(
    status: int, body: bytes, error: type[Exception]
) -> None:
    config = Config.model_validate(
        {"sources": {"dcgm": {"prometheus": {"url": "http://prom:9090"}}}, "advice": {}}
    )
    waits: list[float] = []
    reader = open_reader(config, "config", RetryPolicy(Backoff(sleep=waits.append)))
    assert reader is not None
    assert reader.name == "advice"
    reader.client.close()
    transport = httpx.MockTransport(lambda request: httpx.Response(status, content=body))
    broken = replace(reader, client=httpx.Client(base_url="http://prom:9090", transport=transport))
    with pytest.raises(error):
        broken.read(Reading.open(NOW, ZoneInfo("UTC")))
    broken.close()
    # A 503 is retried within the refresh (waits recorded, never slept); an envelope is not.
    assert len(waits) == (2 if status == 503 else 0)

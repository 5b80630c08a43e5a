"""DCGM through Prometheus: the query, its envelope and the value checks, on a mock transport."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from exporter.config.schema import Config
from exporter.errors import UpstreamIncomplete, UpstreamPayloadError, UpstreamStatusError
from exporter.sources.dcgm.source import KIND, build_client
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW

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
    return lambda: KIND.fetch_from_config(client, config, Reading.open(FIXED_NOW, config.zone))


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
    # The two utilisation queries and power come first; the month's idle queries follow
    # (test_dcgm_idle).
    seen = [u for u in seen if "avg_over_time" in u.params["query"]]
    exprs = [u.params["query"] for u in seen]
    assert len(exprs) == 3
    assert "avg_over_time(DCGM_FI_DEV_POWER_USAGE[2h])" in exprs[2]
    assert exprs[0].startswith("avg by (gpu, UUID, uuid, modelName, Hostname, hostname,")
    assert "avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE[2h])" in exprs[0]
    assert "avg_over_time(DCGM_FI_DEV_GPU_UTIL[2h])" in exprs[1]
    # The workload is read from exported_*: plain pod/namespace name the exporter's own pod.
    assert "exported_pod" in exprs[0] and " pod," not in exprs[0]
    # Attribution's pod label keys, sanitised the way dcgm-exporter names them.
    assert "app_kubernetes_io_team" in exprs[0] and "team)" in exprs[0]
    assert {u.params["time"] for u in seen} == {f"{FIXED_NOW.timestamp():.3f}"}


def test_values_are_checked_and_bad_ones_counted_leaving_their_gpus_use_unknown() -> None:
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
    assert set(got) == {"0", "1", "2", "3", "4", "5"}  # every GPU stays counted with its pod
    assert got["0"].utilisation == pytest.approx(0.875)
    assert (got["0"].namespace, got["0"].pod) == ("ns-a", "p0")
    assert not got["1"].allocated
    assert {g: got[g].corrupt for g in "2345"} == {
        "2": "non_finite",
        "3": "out_of_range",
        "4": "out_of_range",
        "5": "non_finite",
    }
    assert all(got[g].utilisation is None and got[g].allocated for g in "2345")
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


@pytest.mark.parametrize(
    ("value", "reason"),
    [("NaN", "non_finite"), ("-3", "out_of_range"), ("140737488355328", "missing_field")],
)
def test_a_dropped_power_mean_is_that_gpus_power_unknown(value: str, reason: str) -> None:
    # Through Prometheus too: a GPU whose mean draw is not a draw has its power unknown, counted;
    # the ledger then computes no power figure from the GPUs left (tests/unit/ledger).
    def answer(request: httpx.Request) -> httpx.Response:
        expr = request.url.params["query"]
        if "sum_over_time" in expr or "GR_ENGINE" in expr:
            return httpx.Response(200, json=_vector())
        if "POWER_USAGE" in expr:
            return httpx.Response(200, json=_vector((_gpu("0"), "350"), (_gpu("1"), value)))
        return httpx.Response(200, json=_vector((_gpu("0"), "40"), (_gpu("1"), "60")))

    snapshot = _serve(answer, _config())()
    got = {g.gpu: (g.utilisation, g.power_watts, g.power_corrupt) for g in snapshot.gpus}
    assert got == {"0": (0.4, 350.0, ""), "1": (0.6, None, reason)}
    assert snapshot.dropped == {reason: 1}


def test_every_utilisation_mean_corrupt_fails_the_refresh() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        expr = request.url.params["query"]
        if "DCGM_FI_DEV_GPU_UTIL" not in expr or "sum_over_time" in expr:
            return httpx.Response(200, json=_vector())
        return httpx.Response(200, json=_vector((_gpu("0"), "NaN"), (_gpu("1"), "-1")))

    with pytest.raises(UpstreamPayloadError, match="every utilisation sample was corrupt"):
        _serve(answer, _config())()

"""The GPU history's queries, and its refusals of values a report must not print."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs

import httpx
import pytest

from exporter.config.schema import ReportPrometheus
from exporter.errors import UpstreamPayloadError
from exporter.sources.gpu_history import _by, gpu_queries
from exporter.sources.gpu_history_records import GpuSeries
from exporter.sources.prometheus_api import instant_vector

SERIES = GpuSeries("g", "u", "k", "c", "bu", "br")
SPAN = (datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 2, tzinfo=UTC))


def test_the_queries_fold_replicas_and_select_the_cluster() -> None:
    queries = gpu_queries(ReportPrometheus(url="http://p", cluster='e"u'), SPAN, SERIES)
    folded = 'max without (instance, pod, prometheus_replica) (g{state="idle", cluster="e\\"u"})'
    assert queries["idle_gpu_hours"] == f"sum_over_time(({folded})[86400s:60s]) / 60"
    assert queries["utilisation"].startswith("avg_over_time((max without")
    assert "bu{cluster=" in queries["serving"] and "/ max without" in queries["serving"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0])
def test_a_value_no_report_prints_refuses(value: float) -> None:
    with pytest.raises(UpstreamPayloadError):
        _by([({"team": "a"}, value)], "team", "kwh", selected=False)


def test_a_series_without_its_team_or_of_two_clusters_refuses() -> None:
    with pytest.raises(UpstreamPayloadError, match="lacks its team"):
        _by([({}, 1.0)], "team", "kwh", selected=False)
    two = [({"team": "a", "cluster": "x"}, 1.0), ({"team": "a", "cluster": "y"}, 1.0)]
    with pytest.raises(UpstreamPayloadError, match="several clusters"):
        _by(two, "team", "kwh", selected=False)
    # Two jobs' parts of one team add up; a mean is not added.
    parts = [({"team": "a", "job": "x"}, 1.5), ({"team": "a", "job": "y"}, 2.0)]
    assert _by(parts, "team", "kwh", selected=False) == {"a": 3.5}
    assert _by(parts, "team", "utilisation", selected=False) == {"a": 2.0}


def test_the_query_is_one_instant_at_the_period_end() -> None:
    seen: list[dict[str, list[str]]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(parse_qs(request.url.query.decode()))
        body = {"status": "success", "data": {"resultType": "vector", "result": []}}
        return httpx.Response(200, json=body)

    with httpx.Client(base_url="http://p", transport=httpx.MockTransport(answer)) as client:
        assert instant_vector(client, "report.prometheus", "q", SPAN[1]) == []
    assert seen[0]["time"] == [f"{SPAN[1].timestamp():.3f}"]

"""Kueue's metrics: the text of Kueue's own metric names and labels, read part by part."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from exporter.errors import UpstreamError
from exporter.sources.kueue_metrics.metrics import (
    PARTS,
    fetch_kueue_metrics,
    kueue_metric_queries,
    parse_kueue_metrics,
)

TEXT = (Path(__file__).parents[3] / "fixtures" / "kueue" / "metrics.txt").read_text("utf-8")
AT = datetime(2025, 3, 10, tzinfo=UTC)
# The metric each part reads, as Prometheus would return its series unsummed.
METRIC = {
    "pending": "kueue_pending_workloads",
    "wait": "kueue_admission_wait_time_seconds_bucket",
    "admitted": "kueue_admitted_workloads_total",
    "evicted": "kueue_evicted_workloads_total",
    "preempted": "kueue_preempted_workloads_total",
    "queue_share": "kueue_cluster_queue_weighted_share",
    "cohort_share": "kueue_cohort_weighted_share",
}


def series() -> dict[str, list[tuple[dict[str, str], float]]]:
    """Kueue's metric text as a Prometheus would answer each part's selector, raw."""
    by_name: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(TEXT):
        for s in family.samples:
            by_name.setdefault(s.name, []).append((dict(s.labels), s.value))
    return {part: by_name.get(name, []) for part, name in METRIC.items()}


def test_every_part_of_kueues_metric_text() -> None:
    m = parse_kueue_metrics(series())
    assert m.pending == {"team-a-cq": 4, "team-b-cq": 0}  # active + inadmissible, no follower
    assert m.wait["team-a-cq"] == {1: 0, 2.5: 2, 5: 4, 10: 8, math.inf: 8}  # priorities add
    assert m.admitted == {"team-a-cq": 8, "team-b-cq": 2}
    assert m.evicted == {
        ("team-a-cq", "Deactivated"): 1,
        ("team-a-cq", "PodsReadyTimeout"): 1,
        ("team-a-cq", "Preempted"): 2,
    }
    assert m.preempted == {("team-b-cq", "InCohortReclamation"): 2}
    assert m.queue_share["team-a-cq"] == 250 and math.isnan(m.queue_share["team-c-cq"])
    assert m.cohort_share == {"research-org": 0}
    assert m.missing == () and m.dropped == {}


def test_the_order_of_the_series_changes_nothing() -> None:
    shuffled = {part: list(reversed(rows)) for part, rows in series().items()}
    a, b = parse_kueue_metrics(series()), parse_kueue_metrics(shuffled)
    assert a.pending == b.pending and a.wait == b.wait and a.evicted == b.evicted


def test_without_fair_sharing_the_shares_are_missing_and_the_rest_kept() -> None:
    found = series()
    found["queue_share"], found["cohort_share"] = [], []
    m = parse_kueue_metrics(found)
    assert m.missing == ("queue_share", "cohort_share")
    assert m.pending["team-a-cq"] == 4


@pytest.mark.parametrize("value", [-1.0, math.nan, math.inf])
def test_a_count_kueue_never_gives_is_dropped_and_counted(value: float) -> None:
    found = series()
    found["admitted"].append(({"cluster_queue": "team-c-cq"}, value))
    found["pending"].append(({"status": "active"}, 1.0))  # no cluster_queue
    m = parse_kueue_metrics(found)
    assert "team-c-cq" not in m.admitted and sum(m.dropped.values()) == 2


def test_the_queries_leave_followers_out_and_read_counters_over_the_window() -> None:
    q = kueue_metric_queries(86400)
    assert set(q) == set(PARTS)
    assert all('replica_role!="follower"' in expr for expr in q.values())
    assert "increase(kueue_evicted_workloads_total" in q["evicted"] and "[86400s]" in q["evicted"]


def answer_with(failing: set[str]) -> httpx.MockTransport:
    queries = {expr: part for part, expr in kueue_metric_queries(3600).items()}
    rows = series()

    def answer(request: httpx.Request) -> httpx.Response:
        expr = parse_qs(request.url.query.decode())["query"][0]
        part = queries[expr]
        if part in failing:
            return httpx.Response(503, json={"status": "error", "errorType": "unavailable"})
        result = [
            {"metric": labels, "value": [AT.timestamp(), repr(v) if v == v else "NaN"]}
            for labels, v in rows[part]
        ]
        data = {"resultType": "vector", "result": result}
        return httpx.Response(200, content=json.dumps({"status": "success", "data": data}))

    return httpx.MockTransport(answer)


def test_a_part_prometheus_cannot_answer_is_missing_alone() -> None:
    with httpx.Client(base_url="http://prom", transport=answer_with({"wait"})) as client:
        m = fetch_kueue_metrics(client, AT, 3600)
    assert m.missing == ("wait",) and m.evicted[("team-a-cq", "Preempted")] == 2


def test_a_prometheus_that_answers_nothing_fails_the_read() -> None:
    client = httpx.Client(base_url="http://prom", transport=answer_with(set(PARTS)))
    with client, pytest.raises(UpstreamError):
        fetch_kueue_metrics(client, AT, 3600)

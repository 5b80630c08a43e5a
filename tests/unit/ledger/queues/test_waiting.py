"""Waiting: GPU-hours pending within the month, and percentiles as histogram_quantile gives."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.ledger.queues.waiting import (
    Bucket,
    PendingSpan,
    histogram_quantile,
    team_waiting,
    waited_gpu_hours,
)
from tests.support.properties import examples

INF = math.inf
START = datetime(2026, 10, 1, tzinfo=ZoneInfo("Europe/Madrid"))
END = datetime(2026, 11, 1, tzinfo=ZoneInfo("Europe/Madrid"))


def test_a_span_is_clipped_to_the_month_and_still_pending_runs_to_its_end() -> None:
    before = PendingSpan("a", 2, START - timedelta(hours=5), START + timedelta(hours=1))
    pending = PendingSpan("b", 1, END - timedelta(hours=3), None)
    after = PendingSpan("c", 8, END + timedelta(hours=1), None)
    assert waited_gpu_hours([before, pending, after], START, END) == {"a": 2.0, "b": 3.0}


def test_a_wait_across_the_summer_time_change_is_its_real_length() -> None:
    # 25 Oct 2026 02:00 -> 04:00 local in Madrid is 3 real hours (the clock goes back at 03:00).
    zone = ZoneInfo("Europe/Madrid")
    span = PendingSpan("a", 1, datetime(2026, 10, 25, 2, tzinfo=zone), None)
    end = datetime(2026, 10, 25, 4, tzinfo=zone)
    assert waited_gpu_hours([span], START, end) == {"a": pytest.approx(3.0)}


def test_quantiles_as_prometheus_interpolates_them() -> None:
    buckets = [Bucket(INF, 10), Bucket(1, 4), Bucket(10, 8)]  # any order
    assert histogram_quantile(0.2, buckets) == pytest.approx(0.5)
    assert histogram_quantile(0.6, buckets) == pytest.approx(1 + 9 * 2 / 4)
    assert histogram_quantile(0.99, buckets) == 10  # in +Inf: the highest finite bound
    assert histogram_quantile(0.5, [Bucket(INF, 0)]) is None
    assert histogram_quantile(0.5, [Bucket(1, 3)]) is None  # no +Inf bucket: not a histogram


def test_a_team_sums_its_queues_buckets_and_pending() -> None:
    teams = {"cq-1": "a", "cq-2": "a", "cq-3": "b"}
    out = team_waiting(
        {"cq-1": 2, "cq-2": 1},
        {"cq-1": [Bucket(10, 1), Bucket(INF, 1)], "cq-2": [Bucket(10, 0), Bucket(INF, 1)]},
        {"b": 4.0},
        teams.__getitem__,
    )
    a, b = out
    assert (a.team, a.pending_workloads, a.waited_gpu_hours) == ("a", 3, 0.0)
    assert a.percentiles[0.5] == pytest.approx(10.0)
    assert (b.team, b.waited_gpu_hours, b.percentiles[0.5]) == ("b", 4.0, None)


counts = st.lists(st.integers(0, 50), min_size=1, max_size=6)


@settings(max_examples=examples(200))
@given(counts, st.floats(0, 1))
def test_a_quantile_lies_within_the_buckets_and_grows_with_q(steps: list[int], q: float) -> None:
    bounds = [2.0**i for i in range(len(steps))]
    cumulative = [sum(steps[: i + 1]) for i in range(len(steps))]
    buckets = [*map(Bucket, bounds, cumulative), Bucket(INF, cumulative[-1] + 1)]
    low, high = histogram_quantile(q / 2, buckets), histogram_quantile(q, buckets)
    assert low is not None and high is not None
    assert 0 <= low <= high <= bounds[-1]


@settings(max_examples=examples(100))
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(-100, 900), st.integers(0, 900))))
def test_waited_hours_never_exceed_the_gpus_times_the_month(
    spans: list[tuple[int, int, int]],
) -> None:
    start, end = datetime(2026, 2, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)
    made = [
        PendingSpan("a", g, start + timedelta(hours=h), start + timedelta(hours=h + d))
        for g, h, d in spans
    ]
    total = sum(waited_gpu_hours(made, start, end).values())
    assert 0 <= total <= sum(g for g, _, _ in spans) * 672 + 1e-6

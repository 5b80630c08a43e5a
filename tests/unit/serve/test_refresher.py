"""The refresher: failures are isolated per source, a broken join keeps the last exposition."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

import pytest

from exporter.errors import UpstreamPayloadError, UpstreamStatusError, UpstreamUnavailable
from exporter.exposition.catalogue.costs import TEAM_BUDGET, TEAM_COST_MONTH_TO_DATE
from exporter.exposition.catalogue.llm import LLM_BUDGET_SPEND, LLM_COST_PER_TOKEN
from exporter.exposition.render import render
from exporter.exposition.samples import Sample
from exporter.exposition.series.health import build_error_samples
from exporter.serve.refresher import Refresher
from exporter.serve.schedule import MAX_RETRY_AFTER, Source
from tests.conftest import CLOCK, FIXED_NOW
from tests.support.waiting import until
from tests.unit.serve.scripted import as_budgets, scripted


def test_one_failing_source_does_not_stop_the_other() -> None:
    good, bad = [1.0], [UpstreamPayloadError("x: garbage")]
    refresher = Refresher([scripted("good", good), scripted("bad", bad)], as_budgets)
    assert not refresher.refresh_all()
    health = refresher.health()
    assert health["good"].up and not health["bad"].up
    assert health["bad"].errors == {"malformed": 1}
    assert refresher.fresh_records() == {"good": 1.0}


def test_unexpected_exception_is_counted_not_raised() -> None:
    refresher = Refresher([scripted("s", [KeyError("boom")])], as_budgets)
    assert not refresher.refresh("s")
    assert refresher.health()["s"].errors == {"error": 1}


def test_broken_join_keeps_the_last_exposition() -> None:
    calls = []

    def build(records: Mapping[str, object], now: datetime) -> Iterable[Sample]:
        calls.append(1)
        if len(calls) > 1:
            raise ZeroDivisionError("a bug")
        return [Sample.of(TEAM_BUDGET, 7.0, team="t", kind="gpu")]

    refresher = Refresher([scripted("s", [1.0])], build)
    refresher.refresh_all()
    assert b'chargeback_build_errors_total{stage="join"} 0.0' in refresher.exposition.text
    refresher.refresh_all()
    after = refresher.exposition.text
    assert refresher.build_failures == 1
    assert b'chargeback_build_errors_total{stage="join"} 1.0' in after
    assert b'chargeback_team_budget{kind="gpu",team="t"} 7.0' in after


def test_a_render_failure_is_survived_and_heals_by_itself() -> None:
    """Samples that cannot render (here a duplicate series) keep the last good values serving."""
    duplicate = [False]

    def build(records: Mapping[str, object], now: datetime) -> Iterable[Sample]:
        value = float(records["s"])  # type: ignore[arg-type]
        sample = Sample.of(TEAM_BUDGET, value, team="t", kind="gpu")
        return [sample, sample] if duplicate[0] else [sample]

    value: list[object] = [1.0]
    refresher = Refresher([scripted("s", value)], build)
    refresher.start()
    _wait_for(refresher, b'team="t"} 1.0')
    duplicate[0], value[0] = True, 2.0
    _wait_for(refresher, b'chargeback_build_errors_total{stage="render"} 1.0')
    stuck = refresher.exposition.text
    assert b'chargeback_team_budget{kind="gpu",team="t"} 1.0' in stuck  # the last good value
    assert b'chargeback_source_up{source="s"} 1.0' in stuck
    duplicate[0] = False  # the input heals: the loops are still running and pick it up
    _wait_for(refresher, b'team="t"} 2.0')
    refresher.stop()
    assert refresher.build_failures >= 1


def test_figures_a_failing_render_froze_go_at_max_staleness_with_their_source_down(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A render that keeps failing serves the last figures only while they are fresh."""
    now, hostile = [FIXED_NOW], [False]

    def build(records: Mapping[str, object], at: datetime) -> Iterable[Sample]:
        team = "bad\udc80name" if hostile[0] else "t"  # a name no exposition can carry
        return [Sample.of(LLM_BUDGET_SPEND, float(records["litellm"]), team=team)]  # type: ignore[arg-type]

    source = Source("litellm", interval=1, max_staleness=60, fetch=lambda at: 5.0)
    refresher = Refresher([source], build, clock=lambda: now[0])
    line = b'chargeback_llm_budget_spend{team="t"} 5.0'
    assert refresher.refresh_all() and line in refresher.exposition.text
    hostile[0], now[0] = True, now[0] + timedelta(seconds=30)
    refresher.refresh_all()
    text = refresher.exposition.text
    assert b'chargeback_build_errors_total{stage="render"} 1.0' in text
    assert line in text and b'chargeback_source_up{source="litellm"} 1.0' in text
    now[0] += timedelta(seconds=31)  # the figures served were read 61 s ago
    with caplog.at_level(logging.ERROR):
        refresher.refresh_all()
    text = refresher.exposition.text
    assert b"chargeback_llm_budget_spend" not in text
    assert b'chargeback_source_up{source="litellm"} 0.0' in text
    assert not refresher.health()["litellm"].up
    assert "max_staleness of litellm: marking it down" in caplog.text
    hostile[0] = False  # the name goes away: the next build serves again
    refresher.refresh_all()
    assert line in refresher.exposition.text and refresher.health()["litellm"].up


def _wait_for(refresher: Refresher, text: bytes) -> None:
    until(f"{text!r} in the exposition", lambda: text in refresher.exposition.text, tick=0.01)


def test_background_loops_refresh_and_stop() -> None:
    value = [1.0]
    refresher = Refresher([scripted("s", value)], as_budgets)
    refresher.start()
    deadline = time.monotonic() + 5
    while b'team="s"} 1.0' not in refresher.exposition.text and time.monotonic() < deadline:
        time.sleep(0.01)
    value[0] = 2.0
    while b'team="s"} 2.0' not in refresher.exposition.text and time.monotonic() < deadline:
        time.sleep(0.01)
    refresher.stop()
    assert b'chargeback_team_budget{kind="gpu",team="s"} 2.0' in refresher.exposition.text


def test_rebuilds_serve_what_an_uncached_render_of_the_same_samples_would() -> None:
    rounds: list[list[Sample]] = [
        [Sample.of(TEAM_BUDGET, 1.0, team="a", kind="gpu")],
        [Sample.of(TEAM_BUDGET, 1.0, team="a", kind="gpu")],  # equal samples, new objects
        [Sample.of(TEAM_BUDGET, 2.5, team="a", kind="gpu")],  # a value moved
        [Sample.of(TEAM_BUDGET, 2.5, team=t, kind="gpu") for t in ("b", "a")],  # a new series
    ]
    static = [Sample.of(TEAM_BUDGET, 9.0, team="static", kind="llm")]
    current: list[Sample] = []
    refresher = Refresher([], lambda records, now: current, static, clock=CLOCK)
    for samples in rounds:
        current = samples
        refresher.rebuild()
        expected = render([*static, *samples, *build_error_samples({})])
        assert refresher.exposition == expected


def test_a_refresh_cut_short_by_stop_is_no_upstream_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started, closed = threading.Event(), threading.Event()

    def fetch(now: datetime) -> object:
        started.set()
        while not closed.is_set():  # a call to a slow upstream, ended by closing its client
            time.sleep(0.01)
        raise UpstreamUnavailable("slow: unreachable (the client has been closed)")

    source = Source("slow", interval=60, max_staleness=600, fetch=fetch, close=closed.set)
    refresher = Refresher([source], as_budgets)
    refresher.start()
    deadline = time.monotonic() + 10
    # Polls rather than Event.wait(timeout), which never times out under libfaketime.
    while not started.is_set() and time.monotonic() < deadline:
        time.sleep(0.01)
    with caplog.at_level(logging.DEBUG, logger="exporter.serve.refresher"):
        refresher.stop(grace=0.05)
        while "cut short by stop" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.01)
    assert "cut short by stop" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert refresher.health()["slow"].errors == {}


def _rate_limited(seconds: float) -> UpstreamStatusError:
    error = UpstreamStatusError("opencost: HTTP 429 from /allocation: slow down", 429)
    error.retry_after = seconds
    return error


def test_a_retry_after_keeps_the_schedule_off_the_upstream() -> None:
    calls: list[int] = []
    result: list[object] = [_rate_limited(30.0)]

    def fetch(now: datetime) -> object:
        calls.append(1)
        value = result[0]
        if isinstance(value, Exception):
            raise value
        return value

    refresher = Refresher([Source("a", 0.05, 60, fetch)], as_budgets, clock=CLOCK)
    assert not refresher.refresh("a")
    health = refresher.health()["a"]
    assert (health.up, health.backoff) == (False, 30.0) and 29 < health.backoff_left <= 30
    assert 'chargeback_source_backoff_seconds{source="a"} 30.0' in _rebuilt(refresher)
    refresher.start()  # interval 50 ms: without the backoff it would ask a dozen times
    time.sleep(0.6)
    refresher.stop()
    assert not refresher.refresh_all()  # the schedule's full refresh skips it too
    assert len(calls) == 1
    result[0] = 7.0
    assert refresher.refresh("a")  # asked directly (a test, a report), it is read
    assert refresher.health()["a"].backoff == 0.0


def test_a_retry_after_is_capped_and_carried_to_a_new_refresher() -> None:
    refresher = Refresher([scripted("a", [_rate_limited(86_400.0)])], as_budgets, clock=CLOCK)
    refresher.refresh("a")
    assert refresher.health()["a"].backoff == MAX_RETRY_AFTER
    left = refresher.health()["a"].backoff_left
    successor = Refresher([scripted("a", [5.0])], as_budgets, clock=CLOCK, backoff={"a": left})
    assert not successor.refresh_all()
    assert successor.health()["a"].backoff_left > MAX_RETRY_AFTER - 5


def _rebuilt(refresher: Refresher) -> str:
    refresher.rebuild()
    return refresher.exposition.text.decode()


def test_a_failing_render_drops_the_components_of_a_stale_source_from_every_family(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Before: the team month to date is OpenCost's family, so its LLM components stayed
    # served as current until OpenCost's max_staleness, long after LiteLLM's had passed.
    now, hostile = [FIXED_NOW], [False]

    def build(records: Mapping[str, object], at: datetime) -> Iterable[Sample]:
        team = "bad\udc80name" if hostile[0] else "t"  # a name no exposition can carry
        yield Sample.of(TEAM_COST_MONTH_TO_DATE, 10.0, team=team, component="cpu")
        yield Sample.of(TEAM_COST_MONTH_TO_DATE, 4.0, team="t", component="llm_external")
        yield Sample.of(TEAM_COST_MONTH_TO_DATE, -2.0, team="t", component="llm_serving")
        yield Sample.of(TEAM_COST_MONTH_TO_DATE, 2.0, team="u", component="llm_serving")
        yield Sample.of(TEAM_COST_MONTH_TO_DATE, 1.0, team="u", component="borrowed")
        yield Sample.of(LLM_COST_PER_TOKEN, 0.5, model="m", basis="measured")

    sources = [
        Source("opencost", interval=1, max_staleness=600, fetch=lambda at: 1.0),
        Source("litellm", interval=1, max_staleness=60, fetch=lambda at: 1.0),
        Source("kueue", interval=1, max_staleness=600, fetch=lambda at: 1.0),
    ]
    refresher = Refresher(sources, build, clock=lambda: now[0])
    assert refresher.refresh_all()
    hostile[0], now[0] = True, now[0] + timedelta(seconds=61)
    with caplog.at_level(logging.ERROR):
        refresher.refresh_all()
    text = refresher.exposition.text.decode()
    served = [line for line in text.splitlines() if line.startswith("chargeback_team_cost_")]
    assert served == [
        'chargeback_team_cost_month_to_date{component="cpu",team="t"} 10.0',
        'chargeback_team_cost_month_to_date{component="borrowed",team="u"} 1.0',
    ]
    assert "chargeback_llm_cost_per_token{" not in text  # built from LiteLLM's tokens too
    assert 'chargeback_source_up{source="litellm"} 0.0' in text
    assert 'chargeback_source_up{source="opencost"} 1.0' in text


def test_each_rendering_is_handed_over_once_and_let_go() -> None:
    values = [1.0]
    refresher = Refresher([scripted("s", values)], as_budgets)
    # The rendering made at start has no source's health: a scrape given it would see no
    # chargeback_source_up at all, so it is not handed over.
    assert refresher.hand_over() is None
    refresher.refresh_all()
    second = refresher.hand_over()
    assert second is not None and b'team="s"} 1.0' in second.text
    assert refresher.exposition.text == b""  # the worker keeps no copy of what it sent
    assert refresher.hand_over() is None
    values[0] = 2.0
    refresher.refresh_all()  # the family's lines came from the cache, and still do
    third = refresher.hand_over()
    assert third is not None and b'team="s"} 2.0' in third.text

"""The refresh worker process: scrapes answered while it is busy, and a dead worker restarted."""

from __future__ import annotations

import os
import signal
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator

import pytest

from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer
from chargeback_demo.stack import DemoStack
from exporter.config.schema import Config
from exporter.ledger.result import Chargeback
from exporter.serve.server import MetricsServer
from exporter.serve.worker import WorkerRefresher
from tests.conftest import CLOCK, FIXED_NOW

# Liveness bounds, not performance figures: generous so a loaded machine cannot trip them.
PATIENCE = 60.0


def _until(what: str, check: Callable[[], bool]) -> None:
    end = time.monotonic() + PATIENCE
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def _config(opencost: str) -> Config:
    return Config.model_validate(
        {
            "currency": "EUR",
            "teams": [{"name": "research", "namespaces": ["ns-research"]}],
            "sources": {"opencost": {"url": opencost, "interval": "10m"}},
        }
    )


@pytest.fixture
def worker(stack: DemoStack) -> Iterator[WorkerRefresher]:
    running = WorkerRefresher(_config(stack.urls["opencost"]), clock=CLOCK)
    running.start()
    yield running
    running.stop()


def test_the_worker_sends_its_renderings_and_the_health_of_each_source(
    worker: WorkerRefresher,
) -> None:
    _until(
        "a rendering with OpenCost's figures", lambda: b'team="research"' in worker.exposition.text
    )
    assert worker.health["opencost"].up
    assert worker.pid is not None and worker.pid != os.getpid()


def _stamp(config: Config, chargeback: Chargeback) -> bytes:
    """An artefact rendered in the worker from its last join (module level: it is pickled)."""
    return f"{config.currency} {chargeback.at.isoformat()}".encode()


def test_artefacts_are_rendered_in_the_worker_once_per_join(stack: DemoStack) -> None:
    worker = WorkerRefresher(_config(stack.urls["opencost"]), clock=CLOCK, artefacts={"s": _stamp})
    worker.start()
    try:
        _until("the artefact", lambda: "s" in worker.artefacts)
        assert worker.artefacts["s"] == f"EUR {FIXED_NOW.isoformat()}".encode()
    finally:
        worker.stop()


def test_a_killed_worker_is_restarted_and_counted(worker: WorkerRefresher) -> None:
    _until("the first rendering", lambda: b'team="research"' in worker.exposition.text)
    first, before = worker.pid, worker.updates
    assert first is not None
    os.kill(first, signal.SIGKILL)
    _until("a restart", lambda: worker.restarts == 1)
    # Until the new worker has refreshed, scrapes keep the last figures, and the parent counts
    # the restart at once: the worker that would have rendered the count is gone.
    assert b'team="research"' in worker.exposition.text
    assert b"chargeback_worker_restarts_total 1.0" in worker.exposition.text
    _until("the new worker's rendering", lambda: worker.updates > before)
    assert worker.pid not in (None, first)
    assert b"chargeback_worker_restarts_total 1.0" in worker.exposition.text
    assert b'team="research"' in worker.exposition.text


def test_a_scrape_is_answered_while_the_worker_waits_on_a_slow_upstream(
    stack: DemoStack,
) -> None:
    release = threading.Event()

    def slow(request: FakeRequest) -> FakeResponse:
        release.wait()  # holds the worker's refresh until the test lets it go
        return stack.opencost.handle(request)

    upstream = FakeServer(slow).start()
    worker = WorkerRefresher(_config(upstream.url), clock=CLOCK)
    server = MetricsServer(("127.0.0.1", 0), "/metrics", lambda: worker.exposition)
    server.start()
    worker.start(prime=True)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=30) as r:
            body = r.read()
        assert r.status == 200 and b'currency="EUR"' in body
        assert not release.is_set() and worker.updates == 0  # the refresh has not finished
        release.set()
        _until("the refresh to finish", lambda: b'team="research"' in worker.exposition.text)
    finally:
        release.set()
        worker.stop()
        server.stop()
        upstream.stop()


def test_stop_ends_a_worker_stuck_on_an_upstream(stack: DemoStack) -> None:
    stack.opencost.fault, stack.opencost.delay_seconds = "slow", PATIENCE
    worker = WorkerRefresher(_config(stack.urls["opencost"]), clock=CLOCK)
    worker.start(prime=True)
    _until("the worker to start", lambda: worker.pid is not None)
    worker.stop()
    assert worker._process is not None and not worker._process.is_alive()

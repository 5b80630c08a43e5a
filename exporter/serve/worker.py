"""The refresh in a worker process: the serving interpreter only ever receives rendered bytes.

Decoding and joining a large cluster holds the interpreter lock for seconds; in the serving
process that would stall every scrape. The worker (a `spawn`ed process, so no lock or thread
state is inherited) runs the ordinary `Refresher` and sends each new rendering, the health of
every source and any extra artefacts through a pipe. The parent keeps the last one it got, so a
scrape is answered from memory whatever the worker is doing, and a dead worker is restarted.

The parent owns what it can see and the worker cannot: how often the worker was restarted and
whether it works at all. It renders those families itself, ahead of the worker's bytes, and
stops serving the worker's figures once they are older than the shortest `max_staleness`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from exporter import logs
from exporter.clock import Clock, system_clock
from exporter.config.schema import Config
from exporter.exposition.catalogue.health import SOURCE_UP, WORKER_RESTARTS, WORKER_UP
from exporter.exposition.render import Exposition, render, render_before
from exporter.exposition.samples import Sample
from exporter.exposition.series.health import SourceHealth
from exporter.ledger.result import Chargeback
from exporter.serve.collector import tune_collector
from exporter.serve.pages import Artefact
from exporter.serve.refresher import Refresher
from exporter.serve.wiring import Joiner, build_sources, static_samples
from exporter.sources.deadline import RetryPolicy

__all__ = ["Artefact", "Update", "WorkerRefresher"]

log = logging.getLogger(__name__)
_TICK = 0.05  # seconds: how often the worker looks for a new rendering, and stop() for an exit
_MAX_BACKOFF = 30.0  # seconds between restarts of a worker that keeps dying
_LOOK = 1.0  # seconds between the parent's looks at its worker's health while nothing arrives
_ARTEFACTS_EVERY = 60.0  # seconds: the shortest pause between two renderings of the artefacts


@dataclass(frozen=True)
class Update:
    """What the worker hands back after each rendering."""

    exposition: Exposition | None  # None: the figures last sent, with new pages
    health: Mapping[str, SourceHealth]
    artefacts: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class _Started:
    """The worker's first word: its sources are built and it is about to refresh them."""


@dataclass(frozen=True)
class _Spec:
    """Everything the worker needs; pickled to the child, so only plain values and functions."""

    config: Config
    path: str
    clock: Clock
    log_level: int
    artefacts: Mapping[str, Artefact]
    prime: bool = False  # refresh every source once before the first rendering is sent
    # Seconds each source must still wait, as a previous worker was asked (Retry-After).
    backoff: Mapping[str, float] = field(default_factory=dict)


class WorkerRefresher:
    """The parent's side: starts the worker, keeps its last update, restarts it when it dies.

    `exposition`, `health` and `artefacts` are references swapped whole by one reader thread,
    so a scrape reads them without a lock and never sees half an update. `restarts` starts
    from what a reload's predecessor counted, so the counter never goes back.
    """

    def __init__(
        self,
        config: Config,
        path: str = "config",
        clock: Clock = system_clock,
        artefacts: Mapping[str, Artefact] | None = None,
        restarts: int = 0,
        backoff: Mapping[str, float] | None = None,
    ) -> None:
        # Build (and close) the clients here too: a missing secret is a config error, exit 2.
        sources = build_sources(config, path)
        for source in sources:
            source.close()
        level = logging.getLogger().getEffectiveLevel()
        self._spec = _Spec(config, path, clock, level, dict(artefacts or {}))
        # Figures older than the shortest max_staleness would serve some source's stale data.
        self._bound = min((s.max_staleness for s in sources), default=math.inf)
        # What scrapes get without fresh figures: every configured source down.
        self._without = render(
            [*static_samples(config), *(Sample.of(SOURCE_UP, 0.0, source=s.name) for s in sources)]
        )
        self._figures: Exposition | None = None
        self._figures_at = time.monotonic()  # the bound also runs from the start
        self._started = False  # the running process has said it started
        self._failed_start = False  # the last process exited before it said so
        self._composed: tuple[int, bool, bool] | None = None
        self.health: Mapping[str, SourceHealth] = {}
        self.artefacts: Mapping[str, bytes] = {}
        # Until when (time.monotonic()) each source must not be asked: a Retry-After outlives
        # the worker that was told it, through a restart or a reload.
        now = time.monotonic()
        self._backoff_until = {name: now + left for name, left in (backoff or {}).items()}
        self.restarts = restarts
        self.updates = 0  # updates received from every worker so far
        self.exposition: Exposition = self._compose()
        self._stop = threading.Event()
        self._process: BaseProcess | None = None
        self._updates: Connection | None = None
        self._commands: Connection | None = None
        self._spawned = threading.Lock()  # stop() and a restart never race on the process
        self._stopping = threading.Lock()  # one stop() at a time

    @property
    def pid(self) -> int | None:
        """The running worker's process id."""
        return self._process.pid if self._process is not None else None

    def start(self, *, prime: bool = False) -> None:
        """Start the worker; `prime` sends nothing until every source was refreshed once."""
        self._spawn(prime)
        threading.Thread(target=self._read, daemon=True, name="worker-reader").start()

    def wait_ready(self) -> bool:
        """Wait for the first update; False when stopped first or when the worker exited before
        it started (never a timed lock wait)."""
        while not self.updates and not self._stop.is_set() and not self._failed_start:
            time.sleep(_TICK)
        return bool(self.updates) and not self._stop.is_set()

    def status(self) -> tuple[bool, str]:
        """Whether the worker works, and the words /healthz says about it."""
        if self._failed_start and not self._started:
            return False, f"the refresh worker cannot start ({self.restarts} restarts so far)"
        age = time.monotonic() - self._figures_at
        if age > self._bound:
            return False, (
                f"no figures from the refresh worker for {age:.0f}s, past the shortest "
                f"max_staleness of {self._bound:g}s ({self.restarts} restarts so far)"
            )
        return True, "ok"

    def backoff_left(self) -> dict[str, float]:
        """Seconds each source must still wait before it is asked again."""
        now = time.monotonic()
        return {name: t - now for name, t in self._backoff_until.items() if t > now}

    def _fresh(self) -> bool:
        return time.monotonic() - self._figures_at <= self._bound

    def _compose(self) -> Exposition:
        """The worker's figures (while fresh) behind the parent's own families."""
        up, _ = self.status()
        figures = self._figures if self._figures is not None and self._fresh() else self._without
        own = [Sample.of(WORKER_RESTARTS, float(self.restarts)), Sample.of(WORKER_UP, float(up))]
        self._composed = (self.restarts, up, figures is self._figures)
        return render_before(own, figures)

    def _look(self) -> None:
        """Compose again if the worker's health or the figures' freshness changed."""
        up, _ = self.status()
        fresh = self._figures is not None and self._fresh()
        if self._composed != (self.restarts, up, fresh):
            self.exposition = self._compose()

    def _spawn(self, prime: bool) -> None:
        context = multiprocessing.get_context("spawn")
        updates, child_updates = context.Pipe(duplex=False)
        child_commands, commands = context.Pipe(duplex=False)
        spec = replace(self._spec, prime=prime, backoff=self.backoff_left())
        process = context.Process(
            target=_run, args=(spec, child_updates, child_commands), daemon=True, name="refresh"
        )
        with self._spawned:
            if self._stop.is_set():
                return
            process.start()
            self._process, self._updates, self._commands = process, updates, commands
            self._started = False
        # Our copies of the child's ends: once closed, the worker's death reads as EOF.
        child_updates.close()
        child_commands.close()

    def _read(self) -> None:
        while not self._stop.is_set():
            connection = self._updates
            if connection is None:
                return
            try:
                message = connection.recv() if connection.poll(_LOOK) else None
            except (EOFError, OSError):
                if not self._stop.is_set():
                    self._restart()
                continue
            if isinstance(message, _Started):
                self._started, self._failed_start = True, False
            elif isinstance(message, Update):
                if message.exposition is not None:
                    self._figures = message.exposition
                self._figures_at = time.monotonic()
                self.health, self.artefacts = message.health, message.artefacts
                for name, health in message.health.items():
                    self._backoff_until[name] = self._figures_at + health.backoff_left
                self.exposition = self._compose()
                self.updates += 1
            self._look()

    def _restart(self) -> None:
        process = self._process
        if process is not None:
            process.join()  # it is gone already: this only reaps it
        self.restarts += 1
        self._failed_start = not self._started
        code = process.exitcode if process is not None else None
        how = "before it started" if self._failed_start else "while running"
        log.error("the refresh worker exited %s (code %s); restart %d", how, code, self.restarts)
        self.exposition = self._compose()
        # A worker that dies at once would otherwise be restarted in a tight loop.
        self._pause(min(float(self.restarts), _MAX_BACKOFF))
        self._spawn(prime=True)

    def _pause(self, seconds: float) -> None:
        # Short sleeps, not Event.wait(timeout): libfaketime does not intercept sem_clockwait.
        deadline = time.monotonic() + seconds
        while not self._stop.is_set() and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(_TICK, left))
            self._look()

    def stop(self, grace: float = 2.0) -> None:
        """Ask the worker to stop; kill it if it has not exited within `grace` seconds and a bit.

        Safe to call twice, from two threads (a reload giving up while the process stops).
        """
        with self._stopping:
            self._stop_once(grace)

    def _stop_once(self, grace: float) -> None:
        with self._spawned:
            self._stop.set()
        process, commands = self._process, self._commands
        if process is None:
            return
        if commands is not None:
            with contextlib.suppress(OSError):
                commands.send("stop")
        deadline = time.monotonic() + grace + 1.0
        while process.is_alive() and time.monotonic() < deadline:
            time.sleep(_TICK)  # not join(timeout): see _pause
        if process.is_alive():
            process.kill()
        process.join()
        for connection in (commands, self._updates):
            if connection is not None:
                connection.close()


def _run(spec: _Spec, updates: Connection, commands: Connection) -> None:
    """The worker process: refresh, render, and send every new rendering to the parent."""
    # The parent handles the terminal's and the orchestrator's signals and stops us itself
    # (or we see its pipe close): a SIGTERM to the whole process group must not read as a crash.
    for ignored in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(ignored, signal.SIG_IGN)
    logs.configure(spec.log_level)
    tune_collector()
    joiner = Joiner(spec.config)
    sources = build_sources(spec.config, spec.path, RetryPolicy(clock=spec.clock))
    static = static_samples(spec.config)
    refresher = Refresher(sources, joiner, static, spec.clock, spec.backoff)
    _send(updates, _Started())
    threading.Thread(target=_watch, args=(commands, refresher), daemon=True).start()
    if spec.prime:
        refresher.refresh_all()
    refresher.start(refreshed=spec.prime)
    artefacts = _Artefacts(spec)
    while True:
        # Each rendering once, then held by the parent alone: the worker keeps no copy.
        current = refresher.hand_over()
        if current is not None:
            artefacts.outdated = True
            # Later, the exposition goes first: a slow page must not hold back the figures.
            # The first update carries the pages, so a reload's new worker shows them at once.
            if not artefacts.rendered:
                artefacts.render_if_due(joiner.last)
            _send(updates, Update(current, refresher.health(), artefacts.pages))
            del current  # not held while the loop sleeps
        elif artefacts.render_if_due(joiner.last):
            _send(updates, Update(None, refresher.health(), artefacts.pages))
        time.sleep(_TICK)


def _send(updates: Connection, update: Update | _Started) -> None:
    try:
        updates.send(update)
    except OSError:  # the parent is gone
        os._exit(0)


def _watch(commands: Connection, refresher: Refresher) -> None:
    """Stop when told to, or when the parent is gone (the pipe reads as EOF)."""
    with contextlib.suppress(EOFError, OSError):
        commands.recv()
    refresher.stop()
    # The main loop may be inside a refresh that waits on an upstream: do not wait for it.
    os._exit(0)


class _Artefacts:
    """The artefacts of the last join, rendered at most once every _ARTEFACTS_EVERY seconds.

    Every source's refresh makes a new join; a statement of a thousand teams takes seconds to
    draw, and a page people read needs no fresher rendering than once a minute. The pause
    starts only once every page has content: the first joins after a start may come before
    OpenCost's costs (b""), and the page must appear with the first join that has them, not a
    minute later. A renderer that raises waits the same minute: its bug would come back at every
    join, each time with a traceback in the log and a join's worth of CPU.
    """

    def __init__(self, spec: _Spec) -> None:
        self._spec = spec
        self.pages: Mapping[str, bytes] = {}
        self.outdated = False
        self._rendered_at: float | None = None

    @property
    def rendered(self) -> bool:
        """True once every page has been rendered with content, or a renderer has raised."""
        return self._rendered_at is not None

    def render_if_due(self, chargeback: Chargeback | None) -> bool:
        """Render them again if a join came since and the pause is over; True if rendered."""
        if not self.outdated or chargeback is None or not self._spec.artefacts:
            return False
        now = time.monotonic()
        if self._rendered_at is not None and now - self._rendered_at < _ARTEFACTS_EVERY:
            return False
        pages = dict(self.pages)
        failed = False
        for name, make in self._spec.artefacts.items():
            try:
                pages[name] = make(self._spec.config, chargeback)
            except Exception:  # an artefact's bug must not stop the exposition
                log.exception("rendering %s failed; it keeps its previous version", name)
                failed = True
        complete = all(pages.get(name) for name in self._spec.artefacts)
        self.pages, self.outdated = pages, False
        self._rendered_at = now if complete or failed else None
        return True

"""The serving exporter's lifecycle: one refresh worker behind the server, reloaded on SIGHUP."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from exporter.clock import Clock
from exporter.config.schema import Config, load_config
from exporter.errors import ConfigError
from exporter.exposition.render import Exposition
from exporter.serve.pages import Page
from exporter.serve.worker import WorkerRefresher

__all__ = ["Lifecycle"]

log = logging.getLogger(__name__)
# A burst of SIGHUPs makes one reload: it starts once none has come for QUIET seconds, or
# MOST seconds after the first, so a stream of them cannot put it off for ever.
QUIET = 1.0
MOST = 5.0
_TICK = 0.05


class Lifecycle:
    """Owns the running worker; a reload swaps in a new one only once its config is good."""

    def __init__(self, config: Config, path: str, clock: Clock, pages: Sequence[Page] = ()) -> None:
        self._path = path
        self._clock = clock
        # Rendered in the worker after a join (at most once a minute), never at scrape cost.
        self._artefacts = {page.name: page.render for page in pages}
        self._worker = WorkerRefresher(config, path, clock, self._artefacts)
        self._pending: WorkerRefresher | None = None  # a reload's worker, until it takes over
        self._stopped = threading.Event()
        self._reloading = threading.Lock()  # one reload at a time; a scrape never takes it
        # (first, last) time.monotonic() of the reload requests not yet acted on.
        self._asked: tuple[float, float] | None = None

    @property
    def worker(self) -> WorkerRefresher:
        """The worker whose renderings scrapes get."""
        return self._worker

    def exposition(self) -> Exposition:
        """What a scrape gets: the current worker's last rendering."""
        return self._worker.exposition

    def health(self) -> tuple[bool, str]:
        """What /healthz says: whether the current worker works."""
        return self._worker.status()

    def page(self, name: str) -> bytes | None:
        """The current worker's last rendering of a page; None before a join with cost data."""
        return self._worker.artefacts.get(name) or None

    def start(self) -> None:
        """Start the refresh worker, and the thread that acts on reload requests."""
        self._worker.start()
        threading.Thread(target=self._reloads, daemon=True, name="reloads").start()

    def request_reload(self) -> bool:
        """Ask for a reload (safe in a signal handler: no lock, no I/O); True when it starts a
        new burst of requests rather than joining one."""
        now, asked = time.monotonic(), self._asked
        self._asked = (now if asked is None else asked[0], now)
        return asked is None

    def _reloads(self) -> None:
        """Reload once per burst of requests, after it has quietened down."""
        while not self._stopped.is_set():
            asked, now = self._asked, time.monotonic()
            if asked is None or (now - asked[1] < QUIET and now - asked[0] < MOST):
                time.sleep(_TICK)  # not Event.wait(timeout): libfaketime ignores sem_clockwait
                continue
            # Requests from here on ask for another reload: this one may read the file too early.
            self._asked = None
            self.reload()

    def reload(self) -> bool:
        """Read the config file again; keep the running config if the new one is not usable.

        The new worker fetches every source once before it takes over, so a scrape during
        a reload gets the old figures rather than an empty exposition.
        """
        with self._reloading:
            try:
                config = load_config(self._path)
                old = self._worker
                fresh = WorkerRefresher(
                    config,
                    self._path,
                    self._clock,
                    self._artefacts,
                    old.restarts,
                    old.backoff_left(),
                )
            except ConfigError as exc:
                for line in exc.lines():
                    log.error("reload refused, the running config stays: %s", line)
                return False
            self._pending = fresh
            if self._stopped.is_set():
                return False
            fresh.start(prime=True)
            if not fresh.wait_ready():  # stopped while the first refresh ran, or it cannot start
                if not self._stopped.is_set():  # (when stopping, stop() ends it)
                    fresh.stop()
                    log.error("reload refused, the running config stays: its worker cannot start")
                return False
            old, self._worker, self._pending = self._worker, fresh, None
            old.stop()
            log.info("reloaded %s", self._path)
            return True

    def stop(self) -> None:
        """Stop the worker (and a reload's) without waiting for a slow upstream."""
        self._stopped.set()
        pending = self._pending
        if pending is not None:
            pending.stop()
        self._worker.stop()

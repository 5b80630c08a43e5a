"""Per-source refresh schedule, last good records, health, and the cached exposition."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from exporter.errors import UpstreamError
from exporter.samples import Sample
from exporter.snapshot import Exposition, SourceHealth, health_samples, render

__all__ = ["Builder", "Refresher", "Source"]

log = logging.getLogger(__name__)

Builder = Callable[[Mapping[str, object], datetime], Iterable[Sample]]


@dataclass(frozen=True)
class Source:
    """A configured source: how to fetch it and on what schedule."""

    name: str
    interval: float  # seconds between refreshes
    max_staleness: float  # seconds after which its last good records are dropped
    fetch: Callable[[datetime], object]
    close: Callable[[], None] = lambda: None


@dataclass
class _State:
    records: object | None = None
    fetched_at: float | None = None
    up: bool = False
    duration: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)


class Refresher:
    """Refreshes each source on its own thread and re-renders the exposition after each refresh.

    A scrape only reads `exposition`, a reference swapped atomically, so it never waits on an
    upstream and never sees a half-built rendering.
    """

    def __init__(
        self,
        sources: Iterable[Source],
        build: Builder,
        static: Iterable[Sample] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._sources = {s.name: s for s in sources}
        self._states = {name: _State() for name in self._sources}
        self._build = build
        self._static = tuple(static)
        self._clock = clock
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()  # one rebuild at a time, so a late one never wins
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.exposition: Exposition = render(self._static)
        self.build_failures = 0

    def refresh(self, name: str) -> bool:
        """Fetch one source now; on failure keep its last good records and count the reason."""
        source = self._sources[name]
        started = time.monotonic()
        now = datetime.fromtimestamp(self._clock(), UTC)
        try:
            records = source.fetch(now)
        except UpstreamError as exc:
            self._failed(name, exc.reason, str(exc), time.monotonic() - started)
            return False
        except Exception as exc:  # the one per-source guard: never crash
            log.exception("source=%s refresh raised an unexpected error", name)
            self._failed(name, "error", type(exc).__name__, time.monotonic() - started)
            return False
        with self._lock:
            state = self._states[name]
            state.records, state.fetched_at, state.up = records, self._clock(), True
            state.duration = time.monotonic() - started
        log.debug("source=%s refreshed in %.3fs", name, self._states[name].duration)
        return True

    def _failed(self, name: str, reason: str, message: str, duration: float) -> None:
        with self._lock:
            state = self._states[name]
            state.up, state.duration = False, duration
            state.errors[reason] += 1
        log.warning(
            "source=%s refresh failed reason=%s duration=%.3fs: %s", name, reason, duration, message
        )

    def refresh_all(self) -> bool:
        """Refresh every source once, in turn, then rebuild; True when all succeeded."""
        results = [self.refresh(name) for name in sorted(self._sources)]
        self.rebuild()
        return all(results)

    def fresh_records(self) -> dict[str, object]:
        """The last good records of every source that is not past its `max_staleness`."""
        now = self._clock()
        with self._lock:
            return {
                name: state.records
                for name, state in self._states.items()
                if state.fetched_at is not None
                and now - state.fetched_at <= self._sources[name].max_staleness
            }

    def health(self) -> dict[str, SourceHealth]:
        """A copy of every source's health."""
        with self._lock:
            return {
                name: SourceHealth(s.up, s.fetched_at, s.duration, dict(s.errors))
                for name, s in self._states.items()
            }

    def rebuild(self) -> None:
        """Join the fresh records and render the exposition; a failed join keeps the last one."""
        with self._build_lock:
            self._rebuild()

    def _rebuild(self) -> None:
        records = self.fresh_records()
        now = datetime.fromtimestamp(self._clock(), UTC)
        try:
            samples = list(self._build(records, now))
        except Exception:  # a bug in a join must not stop serving
            log.exception("building the chargeback failed; serving the previous values")
            self.build_failures += 1
            samples = None
        if samples is None:
            return
        rendered = render([*self._static, *samples, *health_samples(self.health())])
        self.exposition = rendered

    def start(self) -> None:
        """Start one refresh loop per source."""
        for name in sorted(self._sources):
            thread = threading.Thread(target=self._loop, args=(name,), daemon=True, name=name)
            thread.start()
            self._threads.append(thread)

    def _loop(self, name: str) -> None:
        interval = self._sources[name].interval
        while not self._stop.is_set():
            self.refresh(name)
            self.rebuild()
            self._stop.wait(interval)

    def stop(self) -> None:
        """Stop the loops and close the clients."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)
        for source in self._sources.values():
            source.close()

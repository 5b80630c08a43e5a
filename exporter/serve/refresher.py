"""Refreshes each source on its schedule, keeps its last good records and health, and renders
the cached exposition from them."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

from exporter.clock import Clock, system_clock
from exporter.errors import UpstreamError
from exporter.exposition.render import Exposition, RenderCache, render
from exporter.exposition.samples import Sample, sources_of
from exporter.exposition.series.health import SourceHealth, build_error_samples, health_samples
from exporter.serve.schedule import MAX_RETRY_AFTER, Source, SourceState
from exporter.serve.snapshot import Audited, Reconciled
from exporter.sources.checks import DROP_REASONS

__all__ = ["Builder", "Refresher"]

log = logging.getLogger(__name__)
_TICK = 0.05  # seconds: how soon a sleeping loop notices stop()

Builder = Callable[[Mapping[str, object], datetime], Iterable[Sample]]
# What `exposition` is once its rendering was handed over (Refresher.hand_over).
_HANDED = Exposition(b"", b"", b"", b"")


class Refresher:
    """Refreshes each source on its own thread and re-renders the exposition after each refresh.

    A scrape only reads `exposition`, a reference swapped atomically, so it never waits on an
    upstream and never sees a half-built rendering. Fetch, join and render each fail alone: a
    failure is counted, logged when it changes, and the last good exposition keeps serving.
    """

    def __init__(
        self,
        sources: Iterable[Source],
        build: Builder,
        static: Iterable[Sample] = (),
        clock: Clock = system_clock,
        backoff: Mapping[str, float] | None = None,
    ) -> None:
        """`backoff`: seconds each source must still wait, as a previous worker was asked."""
        self._sources = {s.name: s for s in sources}
        self._states = {name: SourceState() for name in self._sources}
        for name, seconds in (backoff or {}).items():
            if name in self._states and seconds > 0:
                state = self._states[name]
                state.backoff = min(seconds, MAX_RETRY_AFTER)
                state.not_before = time.monotonic() + state.backoff
        self._build = build
        self._static = tuple(static)
        self._clock = clock
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()  # one rebuild at a time, so a late one never wins
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._build_errors: Counter[str] = Counter()
        self._build_error = ""  # the last build failure logged ("" once healed)
        self._joined: tuple[Sample, ...] = ()  # the last joined samples that rendered
        self._joined_at: dict[str, float] = {}  # when each source's records in them were read
        # Sources whose figures a failing build froze for longer than their max_staleness.
        self._frozen: frozenset[str] = frozenset()
        self._rendered = RenderCache()  # families that did not change keep their lines
        self._swap = threading.Lock()  # a rendering and its hand-over never cross
        # The first rendering has no source's health yet: it is never handed over, so the
        # parent serves every source down (or its last figures) until a build has health.
        self._handed = True  # `exposition` was handed over already (hand_over)
        self.exposition: Exposition = render(self._static)

    @property
    def build_failures(self) -> int:
        """How many joins and renders have failed since start."""
        return sum(self._build_errors.values())

    def refresh(self, name: str) -> bool:
        """Fetch one source now; on failure keep its last good records and count the reason.

        A snapshot that reports drops has them counted only when it is accepted; a read that
        failed because it dropped records (RecordsDropped) has them counted with its error.
        """
        source = self._sources[name]
        started = time.monotonic()
        try:
            records = source.fetch(self._clock())
            if isinstance(records, Audited):
                with self._lock:
                    previous = self._states[name].records
                records.check_after(previous)
        except UpstreamError as exc:
            duration = time.monotonic() - started
            self._failed(name, exc.reason, str(exc), duration, dropped=exc.dropped)
            self._back_off(name, exc.retry_after)
            return False
        except Exception as exc:  # noqa: BLE001 - the one per-source guard: never crash
            duration = time.monotonic() - started
            self._failed(name, "error", f"unexpected {type(exc).__name__}: {exc}", duration, exc)
            return False
        with self._lock:
            state = self._states[name]
            state.records, state.fetched_at, state.up = records, self._clock().timestamp(), True
            state.duration = time.monotonic() - started
            state.backoff = 0.0
            if isinstance(records, Audited):
                state.dropped.update(records.dropped)
            if isinstance(records, Reconciled):
                state.repairs = (state.repairs or 0) + records.repairs
            healed, state.last_error = bool(state.last_error), ""
        if healed:
            log.info("source=%s refreshed again after failing", name)
        log.debug("source=%s refreshed in %.3fs", name, state.duration)
        return True

    def _failed(
        self,
        name: str,
        reason: str,
        message: str,
        duration: float,
        exc: BaseException | None = None,
        dropped: Mapping[str, int] | None = None,
    ) -> None:
        if self._stop.is_set():
            # stop() closed the client under a refresh still in flight: that is the shutdown,
            # not the upstream failing, and the last good records stand.
            log.debug("source=%s refresh cut short by stop: %s", name, message)
            return
        with self._lock:
            state = self._states[name]
            state.up, state.duration = False, duration
            state.errors[reason] += 1
            state.dropped.update(dropped or {})
            changed = state.last_error != message
            state.last_error = message
        if changed:
            log.warning(
                "source=%s refresh failed reason=%s duration=%.3fs: %s",
                name,
                reason,
                duration,
                message,
                exc_info=exc,
            )

    def _back_off(self, name: str, asked: float) -> None:
        """Keep the schedule off the upstream for as long as it asked (within reason)."""
        if asked <= 0 or self._stop.is_set():
            return
        seconds = min(asked, MAX_RETRY_AFTER)
        with self._lock:
            state = self._states[name]
            state.backoff, state.not_before = seconds, time.monotonic() + seconds
        log.warning(
            "source=%s: the upstream asked to wait %.0fs (Retry-After%s); its next refresh waits",
            name,
            asked,
            f", honoured up to {MAX_RETRY_AFTER:.0f}s" if asked > seconds else "",
        )

    def _waiting(self, name: str) -> float:
        """Seconds the source must still wait before the schedule may ask it again."""
        with self._lock:
            return self._states[name].not_before - time.monotonic()

    def refresh_all(self) -> bool:
        """Refresh every source once, in turn, then rebuild; True when all succeeded.

        A source still waiting out a Retry-After is not asked (and counts as not succeeded).
        """
        results = [
            self.refresh(name) if self._waiting(name) <= 0 else False
            for name in sorted(self._sources)
        ]
        self.rebuild()
        return all(results)

    def fresh_records(self) -> dict[str, object]:
        """The last good records of every source that is not past its `max_staleness`."""
        return {name: records for name, (records, _) in self._fresh().items()}

    def _fresh(self) -> dict[str, tuple[object, float]]:
        now = self._clock().timestamp()
        with self._lock:
            return {
                name: (state.records, state.fetched_at)
                for name, state in self._states.items()
                if state.fetched_at is not None
                and now - state.fetched_at <= self._sources[name].max_staleness
            }

    def health(self) -> dict[str, SourceHealth]:
        """A copy of every source's health (down, too, while a failing build froze its figures
        for longer than its `max_staleness`)."""
        with self._lock:
            now = time.monotonic()
            return {
                name: SourceHealth(
                    s.up and name not in self._frozen,
                    s.fetched_at,
                    s.duration,
                    dict(s.errors),
                    dict(s.dropped),
                    s.repairs,
                    s.backoff,
                    max(0.0, s.not_before - now),
                )
                for name, s in self._states.items()
            }

    def rebuild(self) -> None:
        """Join the fresh records and render the exposition; a failed step keeps the last one.

        The last one keeps serving only as long as its figures are fresh: a source whose
        records in it are older than its `max_staleness` is marked down and every figure built
        from it dropped (samples.sources_of: its families, and its components of families
        another source feeds), as if it had stopped refreshing, rather than served as fresh.
        """
        with self._build_lock:
            fresh = self._fresh()
            joined = self._join({name: records for name, (records, _) in fresh.items()})
            if joined is not None and self._render(joined, "render"):
                self._joined = joined
                self._joined_at = {name: at for name, (_, at) in fresh.items()}
                self._freeze(frozenset())
                self._healed()
                return
            # Serve the last good samples with the current health and error counts.
            now = self._clock().timestamp()
            stale = frozenset(
                name
                for name, at in self._joined_at.items()
                if now - at > self._sources[name].max_staleness
            )
            self._freeze(stale)
            # A figure goes with any source it is built from: a team's month to date keeps its
            # OpenCost components but not LiteLLM's when only LiteLLM is stale.
            kept = tuple(s for s in self._joined if not sources_of(s) & stale)
            self._render(kept, "")

    def _freeze(self, stale: frozenset[str]) -> None:
        with self._lock:
            before, self._frozen = self._frozen, stale
        if stale - before:
            log.error(
                "the exposition has not been rebuilt for longer than max_staleness of %s: "
                "marking %s down and dropping %s figures until a build works again",
                ", ".join(sorted(stale)),
                "it" if len(stale) == 1 else "them",
                "its" if len(stale) == 1 else "their",
            )

    def _join(self, records: Mapping[str, object]) -> tuple[Sample, ...] | None:
        try:
            return tuple(self._build(records, self._clock()))
        except Exception as exc:  # noqa: BLE001 - a bug in a join must not stop serving
            self._build_failed("join", exc)
            return None

    def _render(self, joined: tuple[Sample, ...], stage: str) -> bool:
        """Render `joined` with the current health; on failure count `stage` (if any)."""
        try:
            samples = [*self._static, *joined, *self._self_samples()]
            exposition = render(samples, self._rendered)
            with self._swap:
                self.exposition, self._handed = exposition, False
        except Exception as exc:  # noqa: BLE001 - a bad sample must not stop serving
            if stage:
                self._build_failed(stage, exc)
            return False
        return True

    def hand_over(self) -> Exposition | None:
        """The rendering made since the last hand-over, once (None: none since), let go here.

        For a caller that sends each rendering away (the worker): its joined bodies are then
        held by the receiver alone, and `exposition` is an empty one until the next rendering.
        Each family's lines stay in the render cache, so the next rendering still reuses them.
        """
        with self._swap:
            if self._handed:
                return None
            handed, self.exposition, self._handed = self.exposition, _HANDED, True
        return handed

    def _self_samples(self) -> list[Sample]:
        health = health_samples(self.health(), DROP_REASONS)
        return [*health, *build_error_samples(self._build_errors)]

    def _build_failed(self, stage: str, exc: Exception) -> None:
        self._build_errors[stage] += 1
        message = f"{stage}: {type(exc).__name__}: {exc}"
        if message != self._build_error:
            self._build_error = message
            log.error(
                "building the exposition failed at %s; serving the previous values",
                stage,
                exc_info=exc,
            )

    def _healed(self) -> None:
        if self._build_error:
            log.info("building the exposition works again")
            self._build_error = ""

    def start(self, *, refreshed: bool = False) -> None:
        """Start one refresh loop per source; `refreshed` skips the first, just-made refresh."""
        for name in sorted(self._sources):
            thread = threading.Thread(
                target=self._loop, args=(name, refreshed), daemon=True, name=name
            )
            thread.start()
            self._threads.append(thread)

    def _loop(self, name: str, refreshed: bool) -> None:
        interval = self._sources[name].interval
        if refreshed:
            self._pause(interval)
        while not self._stop.is_set():
            # An upstream that said Retry-After is not asked again before then.
            if (wait := self._waiting(name)) > 0:
                self._pause(wait)
                continue
            try:
                self.refresh(name)
                self.rebuild()
            except Exception:  # refresh and rebuild guard themselves; this is the last resort
                log.exception("source=%s refresh loop step failed; continuing", name)
            self._pause(interval)

    def _pause(self, seconds: float) -> None:
        """Sleep up to `seconds`, waking within a tick once stopped.

        Short sleeps rather than Event.wait(timeout): a timed lock wait never times out under
        libfaketime (it does not intercept sem_clockwait), and CI runs the suite under it.
        """
        deadline = time.monotonic() + seconds
        while not self._stop.is_set() and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(_TICK, left))

    def stop(self, grace: float = 2.0) -> None:
        """Stop the loops and close the clients, waiting at most `grace` seconds in all.

        A loop blocked on a slow upstream is a daemon thread: closing its client ends the
        request, and the process may exit without it.
        """
        self._stop.set()
        deadline = time.monotonic() + grace
        for thread in self._threads:
            while thread.is_alive() and time.monotonic() < deadline:
                time.sleep(_TICK)  # not join(timeout): see _pause
        for source in self._sources.values():
            source.close()

"""The serving exporter's lifecycle: one refresher behind the server, reloaded on SIGHUP."""

from __future__ import annotations

import logging
import threading

from exporter.clock import Clock
from exporter.config import Config, load_config
from exporter.errors import ConfigError
from exporter.exposition import Exposition
from exporter.refresher import Refresher
from exporter.statement import StatementCache
from exporter.wiring import Joiner, make_refresher

__all__ = ["Service"]

log = logging.getLogger(__name__)


class Service:
    """Owns the running refresher; a reload swaps in a new one only once its config is good."""

    def __init__(self, config: Config, path: str, clock: Clock) -> None:
        self._path = path
        self._clock = clock
        self._refresher, self._statement = self._build(config)
        self._reloading = threading.Lock()  # one reload at a time; a scrape never takes it

    def _build(self, config: Config) -> tuple[Refresher, StatementCache]:
        joiner = Joiner(config)
        refresher = make_refresher(config, self._path, self._clock, joiner)
        return refresher, StatementCache(config, lambda: joiner.last)

    def exposition(self) -> Exposition:
        """What a scrape gets: the current refresher's cached bytes."""
        return self._refresher.exposition

    def statement(self) -> bytes | None:
        """The /statement page of the current refresher's last join (None before one)."""
        return self._statement()

    def start(self) -> None:
        """Start the refresh loops."""
        self._refresher.start()

    def reload(self) -> bool:
        """Read the config file again; keep the running config if the new one is not usable.

        The new refresher fetches every source once before it takes over, so a scrape during
        a reload gets the old figures rather than an empty exposition.
        """
        with self._reloading:
            try:
                fresh, statement = self._build(load_config(self._path))
            except ConfigError as exc:
                for line in exc.lines():
                    log.error("reload refused, the running config stays: %s", line)
                return False
            fresh.refresh_all()
            old, self._refresher, self._statement = self._refresher, fresh, statement
            fresh.start(refreshed=True)
            old.stop()
            log.info("reloaded %s", self._path)
            return True

    def stop(self) -> None:
        """Stop the refresh loops without waiting for an upstream that is slow to answer."""
        self._refresher.stop()

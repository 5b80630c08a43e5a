"""The serving exporter's lifecycle: one refresher behind the server, reloaded on SIGHUP."""

from __future__ import annotations

import logging
import threading

from exporter.clock import Clock
from exporter.config import Config, load_config
from exporter.errors import ConfigError
from exporter.exposition import Exposition
from exporter.refresher import Refresher
from exporter.wiring import make_refresher

__all__ = ["Service"]

log = logging.getLogger(__name__)


class Service:
    """Owns the running refresher; a reload swaps in a new one only once its config is good."""

    def __init__(self, config: Config, path: str, clock: Clock) -> None:
        self._path = path
        self._clock = clock
        self._refresher: Refresher = make_refresher(config, path, clock)
        self._reloading = threading.Lock()  # one reload at a time; a scrape never takes it

    def exposition(self) -> Exposition:
        """What a scrape gets: the current refresher's cached bytes."""
        return self._refresher.exposition

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
                fresh = make_refresher(load_config(self._path), self._path, self._clock)
            except ConfigError as exc:
                for line in exc.lines():
                    log.error("reload refused, the running config stays: %s", line)
                return False
            fresh.refresh_all()
            old, self._refresher = self._refresher, fresh
            fresh.start(refreshed=True)
            old.stop()
            log.info("reloaded %s", self._path)
            return True

    def stop(self) -> None:
        """Stop the refresh loops without waiting for an upstream that is slow to answer."""
        self._refresher.stop()

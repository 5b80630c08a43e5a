"""Which sources a config enables, each bound to its client and its fetch function."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from exporter.calendar import month_start
from exporter.config import Config
from exporter.refresher import Source
from exporter.sources import opencost

__all__ = ["build_sources"]


def build_sources(config: Config) -> list[Source]:
    """One Source per configured upstream, with its own client and schedule."""
    sources: list[Source] = []
    if config.sources.opencost is not None:
        sources.append(_opencost(config))
    return sources


def _opencost(config: Config) -> Source:
    cfg = config.sources.opencost
    assert cfg is not None
    client = opencost.build_client(cfg)
    zone = config.zone

    def fetch(now: datetime) -> object:
        return opencost.fetch(
            client, cfg, now, month_start(now, zone), with_node_costs=config.idle_by_node
        )

    return _source(
        "opencost",
        cfg.interval.total_seconds(),
        cfg.max_staleness.total_seconds(),
        fetch,
        client.close,
    )


def _source(
    name: str,
    interval: float,
    max_staleness: float,
    fetch: Callable[[datetime], object],
    close: Callable[[], None],
) -> Source:
    return Source(name, interval, max_staleness, fetch, close)

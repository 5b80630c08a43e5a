"""Which sources a config enables, each bound to its client and its fetch function."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import httpx

from exporter.calendar import month_start
from exporter.config import Config
from exporter.errors import ConfigError, ConfigIssue
from exporter.refresher import Source
from exporter.sources import dcgm, kueue, litellm, opencost

__all__ = ["build_sources"]


def build_sources(config: Config, config_path: str = "config") -> list[Source]:
    """One Source per configured upstream, with its own client and schedule."""
    sources: list[Source] = []
    if config.sources.opencost is not None:
        sources.append(_opencost(config))
    if config.sources.dcgm is not None:
        sources.append(_dcgm(config))
    if config.sources.kueue is not None:
        sources.append(_kueue(config, config_path))
    if config.sources.litellm is not None:
        sources.append(_litellm(config, config_path))
    return sources


def _dcgm(config: Config) -> Source:
    cfg = config.sources.dcgm
    assert cfg is not None
    client = dcgm.build_client(cfg)

    def fetch(now: datetime) -> object:
        del now  # dcgm-exporter serves its latest sample; there is no window to ask for
        return dcgm.fetch(client, cfg)

    return Source(
        "dcgm",
        cfg.interval.total_seconds(),
        cfg.max_staleness.total_seconds(),
        fetch,
        client.close,
    )


def _kueue(config: Config, config_path: str) -> Source:
    cfg = config.sources.kueue
    assert cfg is not None
    try:
        client = kueue.build_client(cfg)
    except ConfigError as exc:
        raise ConfigError(config_path, exc.issues) from None

    def fetch(now: datetime) -> object:
        del now  # the Kubernetes API answers with the current state
        return kueue.fetch(client, cfg)

    return Source(
        "kueue",
        cfg.interval.total_seconds(),
        cfg.max_staleness.total_seconds(),
        fetch,
        client.close,
    )


def _opencost(config: Config) -> Source:
    cfg = config.sources.opencost
    assert cfg is not None
    client = opencost.build_client(cfg)
    zone = config.zone

    def fetch(now: datetime) -> object:
        return opencost.fetch(
            client, cfg, now, month_start(now, zone), with_node_costs=config.idle_by_node
        )

    return Source(
        "opencost",
        cfg.interval.total_seconds(),
        cfg.max_staleness.total_seconds(),
        fetch,
        client.close,
    )


def _litellm(config: Config, config_path: str) -> Source:
    cfg = config.sources.litellm
    assert cfg is not None
    client = _with_secret(config_path, "sources.litellm", lambda: litellm.build_client(cfg))

    def fetch(now: datetime) -> object:
        return litellm.fetch(client, cfg, now)

    return Source(
        "litellm",
        cfg.interval.total_seconds(),
        cfg.max_staleness.total_seconds(),
        fetch,
        client.close,
    )


def _with_secret(path: str, key: str, build: Callable[[], httpx.Client]) -> httpx.Client:
    """Build a client that needs a secret; a missing secret is a config error (exit 2)."""
    try:
        return build()
    except ValueError as exc:
        raise ConfigError(path, [ConfigIssue(None, key, str(exc))]) from None

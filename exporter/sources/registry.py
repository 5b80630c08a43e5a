"""Which sources a config enables, each bound to its client and its fetch function."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial

import httpx

from exporter.calendar import month_start
from exporter.config import Config, SourceConfig
from exporter.errors import ConfigError, ConfigIssue
from exporter.refresher import Source
from exporter.sources import dcgm, kueue, litellm, opencost

__all__ = ["build_sources"]


def build_sources(config: Config, config_path: str = "config") -> list[Source]:
    """One Source per configured upstream, with its own client and schedule.

    Clients are built here, once, so a missing secret or an unreadable kubeconfig is a config
    error at start (exit 2), not a failing refresh later.
    """
    sources: list[Source] = []
    oc, dc, kq, ll = (
        config.sources.opencost,
        config.sources.dcgm,
        config.sources.kueue,
        config.sources.litellm,
    )
    if oc is not None:
        client = opencost.build_client(oc)
        zone, by_node = config.zone, config.idle_by_node

        def fetch_opencost(now: datetime, c: httpx.Client = client) -> object:
            return opencost.fetch(c, oc, now, month_start(now, zone), with_node_costs=by_node)

        sources.append(_scheduled("opencost", oc, fetch_opencost, client))
    if dc is not None:
        client = dcgm.build_client(dc)
        fetch_dcgm = _current_state(partial(dcgm.fetch, client, dc))
        sources.append(_scheduled("dcgm", dc, fetch_dcgm, client))
    if kq is not None:
        client = _configured(config_path, "sources.kueue", partial(kueue.build_client, kq))
        fetch_kueue = _current_state(partial(kueue.fetch, client, kq))
        sources.append(_scheduled("kueue", kq, fetch_kueue, client))
    if ll is not None:
        client = _configured(config_path, "sources.litellm", partial(litellm.build_client, ll))
        sources.append(_scheduled("litellm", ll, partial(litellm.fetch, client, ll), client))
    return sources


def _current_state(fetch: Callable[[], object]) -> Callable[[datetime], object]:
    """dcgm-exporter and the Kubernetes API answer with their current state: no window to ask."""
    return lambda now: fetch()


def _scheduled(
    name: str, cfg: SourceConfig, fetch: Callable[[datetime], object], client: httpx.Client
) -> Source:
    return Source(
        name, cfg.interval.total_seconds(), cfg.max_staleness.total_seconds(), fetch, client.close
    )


def _configured(path: str, key: str, build: Callable[[], httpx.Client]) -> httpx.Client:
    """Build a client from config that may be wrong (secret, kubeconfig): a config error, exit 2."""
    try:
        return build()
    except ConfigError as exc:
        raise ConfigError(path, exc.issues) from None
    except ValueError as exc:
        raise ConfigError(path, [ConfigIssue(None, key, str(exc))]) from None

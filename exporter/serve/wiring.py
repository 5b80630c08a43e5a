"""Wiring: from a config to clients, scheduled sources, and the refresher that joins them."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import httpx

from exporter import __version__
from exporter.clock import Clock, system_clock
from exporter.config.schema import Config
from exporter.errors import ConfigError, ConfigIssue, UpstreamUnavailable
from exporter.exposition.catalogue import BUILD, CONFIG
from exporter.exposition.samples import Sample
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import Chargeback, LlmMemo, join
from exporter.serve.refresher import Refresher, Source
from exporter.sources.deadline import RetryPolicy, refresh_budget
from exporter.sources.kind import SourceKind
from exporter.sources.table import SOURCES, Records

__all__ = ["Joiner", "build_sources", "make_refresher", "static_samples"]

log = logging.getLogger("exporter")


def build_sources(
    config: Config, config_path: str = "config", policy: RetryPolicy | None = None
) -> list[Source]:
    """One scheduled Source per configured upstream, in table order, each with its own client.

    Clients are built here, once, so a missing secret or an unreadable kubeconfig is a config
    error at start (exit 2), not a failing refresh later. Each refresh runs under a budget of
    its source's `refresh_deadline`, retrying transient failures as `policy` says.
    """
    retries = policy or RetryPolicy()
    return [
        _scheduled(kind, cfg, config, config_path, retries)
        for kind in SOURCES.values()
        if (cfg := kind.section(config)) is not None
    ]


def _scheduled(
    kind: SourceKind[Any, Any], cfg: Any, config: Config, path: str, policy: RetryPolicy
) -> Source:
    client = _client(kind, cfg, path)
    seconds = cfg.refresh_deadline.total_seconds()

    def fetch(now: datetime) -> object:
        with refresh_budget(policy.start(seconds)) as budget:
            records = kind.fetch(client, config, now)
        # Time spent between calls (parsing, paging logic) counts too.
        if budget.remaining() < 0:
            raise UpstreamUnavailable(
                f"{kind.name}: refresh took longer than its deadline of {seconds:g}s",
                timeout=True,
            )
        return records

    interval, staleness = cfg.interval.total_seconds(), cfg.max_staleness.total_seconds()
    return Source(kind.name, interval, staleness, fetch, client.close)


def _client(kind: SourceKind[Any, Any], cfg: Any, path: str) -> httpx.Client:
    """Build a client from config that may be wrong (secret, kubeconfig): a config error, exit 2."""
    try:
        return kind.build_client(cfg)
    except ConfigError as exc:
        raise ConfigError(path, exc.issues) from None
    except ValueError as exc:
        raise ConfigError(path, [ConfigIssue(None, f"sources.{kind.name}", str(exc))]) from None


def static_samples(config: Config) -> list[Sample]:
    """Build and config info, which never change while the process runs."""
    return [
        Sample.of(BUILD, 1.0, version=__version__),
        Sample.of(CONFIG, 1.0, currency=config.currency, idle_policy=config.idle_policy.value),
    ]


class Joiner:
    """The refresher's builder: joins fresh snapshots, keeps the last chargeback for the report,
    and logs the teams folded into `__other__` when that set changes, not on every refresh."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._attributor = Attributor(config)
        self._llm = LlmMemo()  # LiteLLM's part, redone only when its snapshot changes
        self.last: Chargeback | None = None

    def __call__(self, snapshots: Mapping[str, object], now: datetime) -> Iterable[Sample]:
        """Join, remember, and hand the samples to the renderer."""
        records = Records.of(snapshots)
        chargeback = join(self._config, self._attributor, records, now, self._llm)
        previous, self.last = self.last, chargeback
        folded = chargeback.folded_teams
        if folded != (previous.folded_teams if previous else ()) and folded:
            log.warning(
                "%d teams over attribution.max_teams=%d folded into __other__: %s",
                len(folded),
                self._config.attribution.max_teams,
                ", ".join(folded),
            )
        return chargeback.samples


def make_refresher(
    config: Config,
    config_path: str = "config",
    clock: Clock = system_clock,
    joiner: Joiner | None = None,
    policy: RetryPolicy | None = None,
) -> Refresher:
    """A refresher over every configured source, joining them with the config's policy."""
    build = joiner or Joiner(config)
    sources = build_sources(config, config_path, policy or RetryPolicy(clock=clock))
    return Refresher(sources, build, static_samples(config), clock)

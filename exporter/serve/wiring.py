"""Wiring: from a config to clients, scheduled sources, and the refresher that joins them."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

from exporter import __version__
from exporter.clock import Clock, system_clock
from exporter.config.schema import Config
from exporter.exposition.catalogue.health import BUILD, CONFIG
from exporter.exposition.samples import Sample
from exporter.exposition.series import SeriesMemo, series
from exporter.ledger.advice import AdviceSet
from exporter.ledger.advice.priced import team_advice
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.window import WindowMemo
from exporter.ledger.forecast import DayBook
from exporter.ledger.forecast.build import noted
from exporter.ledger.join import join
from exporter.ledger.llm.memo import LlmMemo
from exporter.ledger.prices.applied import AppliedPrice
from exporter.ledger.result import Chargeback
from exporter.serve.refresher import Refresher
from exporter.serve.schedule import Source
from exporter.sources.dcgm_history import source as history
from exporter.sources.dcgm_history.records import History
from exporter.sources.deadline import RetryPolicy
from exporter.sources.readers import SourceReader, open_readers
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots

__all__ = ["Joiner", "build_sources", "make_refresher", "static_samples"]

log = logging.getLogger("exporter")


def build_sources(
    config: Config, config_path: str = "config", policy: RetryPolicy | None = None
) -> list[Source]:
    """One scheduled Source per configured upstream, in table order, each reading the open
    month up to the refresh's instant (clients are built now: a bad secret is exit 2)."""
    zone = config.zone
    readers = open_readers(config, config_path, policy)
    advice = history.open_reader(config, config_path, policy)
    return [_scheduled(reader, zone) for reader in [*readers, *([advice] if advice else [])]]


def _scheduled(reader: SourceReader, zone: ZoneInfo) -> Source:
    def fetch(now: datetime) -> object:
        return reader.read(Reading.open(now, zone))

    cfg = reader.settings
    interval, staleness = cfg.interval.total_seconds(), cfg.max_staleness.total_seconds()
    return Source(reader.name, interval, staleness, fetch, reader.close)


def static_samples(config: Config) -> list[Sample]:
    """Build and config info, which never change while the process runs."""
    return [
        Sample.of(BUILD, 1.0, version=__version__),
        Sample.of(CONFIG, 1.0, currency=config.currency, idle_policy=config.idle_policy.value),
    ]


class Joiner:
    """The refresher's builder: joins fresh snapshots, keeps the last chargeback for the report,
    and logs the teams and models folded into `__other__` when a set changes, not every time."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._attributor = Attributor(config)
        self._llm = LlmMemo()  # LiteLLM's part, redone only when its snapshot changes
        self._windows = WindowMemo()  # OpenCost's windows, redone only when its sets change
        self._series = SeriesMemo()  # each area's series, built again only when its parts change
        self._days = DayBook()  # each local day's last month to date: the forecast's days
        self.last: Chargeback | None = None
        # The advice of the last history read at the last prices: redone only when either
        # changes (hourly), not on every join (0.16 CPU-s at 10,000 GPUs, bench.advice).
        self._advised: tuple[History, tuple[AppliedPrice, ...], AdviceSet | None] | None = None

    def __call__(self, snapshots: Mapping[str, object], now: datetime) -> Iterable[Sample]:
        """Join, remember, and hand the samples to the renderer."""
        own = {name: s for name, s in snapshots.items() if name != history.SOURCE}
        latest = Snapshots.of(own)
        reading = Reading.open(now, self._config.zone)
        chargeback = join(
            self._config, self._attributor, latest, reading, self._llm, windows=self._windows
        )
        window = snapshots.get(history.SOURCE)
        if isinstance(window, History):
            chargeback = replace(chargeback, advice=self._advice(window, chargeback))
        chargeback = self._forecast(chargeback)
        previous, self.last = self.last, chargeback
        cap = self._config.attribution
        _log_fold(
            "teams",
            "max_teams",
            cap.max_teams,
            chargeback.folded_teams,
            previous.folded_teams if previous else (),
        )
        _log_fold(
            "models",
            "max_models",
            cap.max_models,
            _folded_models(chargeback),
            _folded_models(previous) if previous else (),
        )
        return series(chargeback, self._series)

    def _advice(self, window: History, chargeback: Chargeback) -> AdviceSet | None:
        prices = chargeback.units.prices
        memo = self._advised
        if memo is not None and memo[0] is window and memo[1] == prices:
            return memo[2]
        advice = team_advice(self._config, self._attributor, window, prices)
        self._advised = (window, prices, advice)
        return advice

    def _forecast(self, chargeback: Chargeback) -> Chargeback:
        """Write the month to date in the day book, then forecast the month's end from it."""
        self._days, chargeback = noted(self._days, chargeback)
        return chargeback


def _folded_models(chargeback: Chargeback) -> tuple[str, ...]:
    return chargeback.llm.folded_models if chargeback.llm is not None else ()


def _log_fold(
    what: str, key: str, cap: int, folded: tuple[str, ...], before: tuple[str, ...]
) -> None:
    """Say which names fold into `__other__` when that set changes, not on every refresh."""
    if folded and folded != before:
        log.warning(
            "%d %s over attribution.%s=%d folded into __other__: %s",
            len(folded),
            what,
            key,
            cap,
            ", ".join(folded),
        )


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

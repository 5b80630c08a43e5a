"""What every source module exports to the wiring: one row of the source table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import httpx

from exporter.config.schema import Config, SourceConfig
from exporter.sources.reading import Reading

__all__ = ["SourceKind", "nothing_shared", "section"]

C = TypeVar("C", bound=SourceConfig)
H = TypeVar("H")
S = TypeVar("S")


@dataclass(frozen=True)
class SourceKind(Generic[C, H, S]):
    """One upstream: its name, its config section, the few settings from outside that section
    it reads, how to build its client, and how to fetch.

    `fetch(client, cfg, shared, reading)` is the one signature of every source: its own
    section, the settings it shares with the rest of the config (`shared(config)`, a small
    frozen value built once by the wiring: a window another source sets, the label keys, a
    policy switch), and what to read (`Reading`: the open month up to now, a closed month, or a
    closed month kept day by day). No source sees the whole config.
    """

    name: str
    snapshot: type[S]
    section: Callable[[Config], C | None]
    shared: Callable[[Config], H]
    build_client: Callable[[C], httpx.Client]
    fetch: Callable[[httpx.Client, C, H, Reading], S]
    # Where its section sits in the config file, when not under `sources.<name>` (a bill's).
    key: tuple[str, ...] = ()

    @property
    def config_key(self) -> tuple[str, ...]:
        """The config keys of its section, for an error that names its line."""
        return self.key or ("sources", self.name)

    def fetch_from_config(self, client: httpx.Client, config: Config, reading: Reading) -> S:
        """Fetch with this source's section and shared settings taken from `config` now."""
        cfg = section(self.section(config), self.name)
        return self.fetch(client, cfg, self.shared(config), reading)


def nothing_shared(config: Config) -> None:
    """The shared settings of a source that reads nothing outside its own section."""
    del config


def section(value: C | None, name: str) -> C:
    """A source's config section, which the wiring only fetches when it is set."""
    if value is None:
        raise ValueError(f"sources.{name} is not configured")
    return value

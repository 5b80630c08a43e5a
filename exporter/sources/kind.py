"""What every source module exports to the wiring: one row of the source table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import httpx

from exporter.config.schema import Config, SourceConfig
from exporter.sources.reading import Reading

__all__ = ["SourceKind", "section"]

C = TypeVar("C", bound=SourceConfig)
S = TypeVar("S")


@dataclass(frozen=True)
class SourceKind(Generic[C, S]):
    """One upstream: its name, its config section, how to build its client, and how to fetch.

    `fetch(client, config, reading)` is the one signature of every source: the whole config
    (for the policy switches some sources must know), and what to read (`Reading`: the open
    month up to now, a closed month, or a closed month kept day by day).
    """

    name: str
    snapshot: type[S]
    section: Callable[[Config], C | None]
    build_client: Callable[[C], httpx.Client]
    fetch: Callable[[httpx.Client, Config, Reading], S]


def section(value: C | None, name: str) -> C:
    """A source's config section, which the wiring only fetches when it is set."""
    if value is None:
        raise ValueError(f"sources.{name} is not configured")
    return value

"""A configured source's schedule, and what the refresher keeps of it between refreshes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

__all__ = ["MAX_RETRY_AFTER", "Source", "SourceState"]

# The longest Retry-After honoured: an upstream asking for a day would silence its source
# past every max_staleness; ten minutes is polite and still heals within the hour.
MAX_RETRY_AFTER = 600.0


@dataclass(frozen=True)
class Source:
    """A configured source: how to fetch it and on what schedule."""

    name: str
    interval: float  # seconds between refreshes
    max_staleness: float  # seconds after which its last good records are dropped
    fetch: Callable[[datetime], object]
    close: Callable[[], None] = lambda: None


@dataclass
class SourceState:
    """One source's last good records, health and back-off, as its refreshes left them."""

    records: object | None = None
    fetched_at: float | None = None
    up: bool = False
    duration: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    repairs: int | None = None
    last_error: str = ""  # the message last logged, so a repeated failure is logged once
    backoff: float = 0.0  # seconds the upstream last asked to wait (Retry-After), capped
    not_before: float = 0.0  # time.monotonic() before which the schedule asks nothing

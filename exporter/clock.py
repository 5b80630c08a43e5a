"""The one place that reads the wall clock: everything else is handed a `Clock`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["Clock", "fixed_clock", "system_clock"]

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    """The real time, as an aware datetime in UTC."""
    return datetime.now(UTC)


def fixed_clock(instant: datetime) -> Clock:
    """A clock that always answers `instant` (for tests, and reports at a chosen time)."""
    if instant.tzinfo is None:
        raise ValueError("a fixed clock needs an aware datetime")
    return _Fixed(instant)


@dataclass(frozen=True)
class _Fixed:
    """A fixed clock as a value, not a closure: it pickles, so a worker process can get it."""

    instant: datetime

    def __call__(self) -> datetime:
        return self.instant

"""How long one refresh may take over its upstream calls, and how to back off and retry."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from exporter.clock import Clock, system_clock
from exporter.config.types import DEFAULT_MAX_RESPONSE_SIZE

__all__ = [
    "NO_RETRY",
    "Backoff",
    "Deadline",
    "RetryPolicy",
    "current",
    "refresh_deadline",
    "retry_after",
]


@dataclass(frozen=True)
class Backoff:
    """Bounded exponential backoff with full jitter: the wait before retry n is drawn from
    [0, min(cap, base * 2**(n-1))], so replicas hitting one rate limit spread out."""

    attempts: int = 3  # every try, the first included
    base: float = 0.5
    cap: float = 8.0
    rng: random.Random = field(default_factory=random.Random, compare=False)
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def delay(self, retry: int) -> float:
        """The jittered wait before retry number `retry` (1 for the first retry)."""
        return self.rng.uniform(0.0, min(self.cap, self.base * 2.0 ** (retry - 1)))


# Outside a refresh (a one-off call, a unit test) nothing is retried: a retry needs a deadline.
NO_RETRY = Backoff(attempts=1)


@dataclass(frozen=True)
class RetryPolicy:
    """How every refresh's calls wait: its backoff, its stopwatch, and its clock.

    `monotonic` times the deadlines; `clock` only dates a Retry-After HTTP-date when the
    upstream sent no Date header to measure it against.
    """

    backoff: Backoff = field(default_factory=Backoff)
    monotonic: Callable[[], float] = time.monotonic
    clock: Clock = system_clock

    def start(self, seconds: float, max_body: float = DEFAULT_MAX_RESPONSE_SIZE) -> Deadline:
        """The deadline of a refresh starting now that may last `seconds` and read replies of
        at most `max_body` bytes each."""
        return Deadline(self, self.monotonic() + seconds, seconds, max_body)


@dataclass(frozen=True)
class Deadline:
    """One refresh's deadline (`expires`, in `policy.monotonic` seconds), its retry policy, and
    the most bytes one reply of it may decompress to (`max_body`).

    It also keeps the longest wait an upstream asked for (`Retry-After`) that the refresh could
    not honour before its deadline, so the next refresh can wait for it.
    """

    policy: RetryPolicy
    expires: float = math.inf
    seconds: float = math.inf
    # Outside a refresh (the report's quota history, a one-off call) the default limit holds.
    max_body: float = DEFAULT_MAX_RESPONSE_SIZE
    _asked: list[float] = field(default_factory=lambda: [0.0], compare=False, repr=False)

    def remaining(self) -> float:
        """Seconds left before the deadline (negative once it has passed)."""
        return self.expires - self.policy.monotonic()

    def asked_to_wait(self, seconds: float) -> None:
        """Remember that an upstream asked for `seconds` before the next request."""
        self._asked[0] = max(self._asked[0], seconds)

    @property
    def retry_after(self) -> float:
        """The longest wait asked for and not honoured in this refresh (0 when none)."""
        return self._asked[0]


_OUTSIDE = Deadline(RetryPolicy(backoff=NO_RETRY))
_CURRENT: ContextVar[Deadline | None] = ContextVar("refresh_deadline", default=None)


def current() -> Deadline:
    """The deadline of the refresh running in this thread (none, and no retry, outside one)."""
    return _CURRENT.get() or _OUTSIDE


@contextmanager
def refresh_deadline(deadline: Deadline) -> Iterator[Deadline]:
    """Run the calls of one refresh under `deadline`."""
    token = _CURRENT.set(deadline)
    try:
        yield deadline
    finally:
        _CURRENT.reset(token)


def retry_after(headers: Mapping[str, str], clock: Clock) -> float | None:
    """Seconds a `Retry-After` header asks to wait (delay-seconds or HTTP-date), or None.

    An HTTP-date is measured against the response's own `Date` when there is one, so a skewed
    clock on either side does not stretch or cut the wait (RFC 9110 section 10.2.3).
    """
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    when = _http_date(value)
    if when is None:
        return None
    now = _http_date(headers.get("date", "")) or clock()
    return max(0.0, (when - now).total_seconds())


def _http_date(value: str) -> datetime | None:
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    # HTTP-dates are always GMT; "-0000" parses as naive.
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)

"""The config's value types: bounded durations, URLs, prices, the idle policy, the strict model."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import timedelta
from enum import StrEnum
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

__all__ = [
    "DEFAULT_MAX_RESPONSE_SIZE",
    "MAX_GPU_HOUR",
    "ByteSize",
    "GpuHourPrice",
    "IdlePolicy",
    "Interval",
    "Price",
    "RateWindow",
    "Staleness",
    "StrictModel",
    "Timeout",
    "Url",
    "format_duration",
    "parse_duration",
    "parse_size",
    "within",
]

_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
# Far beyond any bound below, and well inside what timedelta can hold.
_LONGEST = 366 * 86400.0


def parse_duration(value: object) -> timedelta:
    """Parse a Prometheus-style duration ("30s", "5m", "1h") or a number of seconds."""
    if isinstance(value, timedelta):
        return value
    duration = timedelta(seconds=_seconds(value))
    if not duration:
        raise ValueError("a duration must be at least a microsecond")
    return duration


def _seconds(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value.strip())):
        seconds = float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
    else:
        raise ValueError(f"expected a duration like 30s, 5m or 1h, got {value!r}")
    if not math.isfinite(seconds):
        raise ValueError("a duration must be a finite number")
    if seconds <= 0:
        raise ValueError("a duration must be positive")
    if seconds > _LONGEST:
        raise ValueError("a duration must be at most a year")
    return seconds


def format_duration(value: timedelta) -> str:
    """The shortest exact Prometheus-style spelling of a duration ("90s", "1h", "250ms")."""
    seconds = value.total_seconds()
    ms = round(seconds * 1000)
    if ms == 0 or abs(seconds * 1000 - ms) > 1e-6:
        return f"{seconds:g}s"
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def within(low: str, high: str) -> Callable[[object], timedelta]:
    """A duration parser that also refuses values outside [low, high]."""
    lowest, highest = _seconds(low), _seconds(high)

    def parse(value: object) -> timedelta:
        if isinstance(value, timedelta):
            value = value.total_seconds()
        seconds = _seconds(value)
        # Echo what the file says: 0.0001ms is below timedelta's microsecond resolution.
        shown = value.strip() if isinstance(value, str) else f"{seconds:g}s"
        if seconds < lowest:
            raise ValueError(f"must be at least {low}, got {shown}")
        if seconds > highest:
            raise ValueError(f"must be at most {high}, got {shown}")
        return timedelta(seconds=seconds)

    return parse


_SIZE = re.compile(r"^([0-9]+)(B|KiB|MiB|GiB)?$")
_UNIT_BYTES = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
# The largest reply one read holds, after decompression: OpenCost's allocation body of 50,000
# workloads is 72 MiB and a LiteLLM day of 1,000 teams x 50 models 36 MB (docs/performance.md).
DEFAULT_MAX_RESPONSE_SIZE = 128 << 20
_SIZE_BOUNDS = (64 << 10, 4 << 30)


def parse_size(value: object) -> int:
    """A size in bytes: a whole number, or one with a unit (64KiB, 128MiB, 1GiB)."""
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif isinstance(value, str) and (m := _SIZE.match(value.strip())):
        size = int(m.group(1)) * _UNIT_BYTES[m.group(2) or "B"]
    else:
        raise ValueError(f"expected a size like 64MiB, 512KiB or a number of bytes, got {value!r}")
    low, high = _SIZE_BOUNDS
    if not low <= size <= high:
        raise ValueError(f"must be between 64KiB and 4GiB, got {value!r}")
    return size


ByteSize = Annotated[int, BeforeValidator(parse_size)]
Interval = Annotated[timedelta, BeforeValidator(within("1s", "1d"))]
Timeout = Annotated[timedelta, BeforeValidator(within("100ms", "5m"))]
Staleness = Annotated[timedelta, BeforeValidator(within("1s", "7d"))]
RateWindow = Annotated[timedelta, BeforeValidator(within("1m", "7d"))]


def no_credentials(url: str) -> str:
    """Refuse `user:password@` in a URL: every error and log line naming the URL would show it."""
    if "@" in urlsplit(url).netloc:
        # The value is never echoed: it holds the password.
        raise ValueError(
            "a URL must not hold credentials (user:password@host): error messages and logs name"
            " the URL; give a token or key in its own file or environment variable"
        )
    return url


Url = Annotated[str, Field(pattern=r"^https?://[^\s]+$"), AfterValidator(no_credentials)]
Price = Annotated[float, Field(ge=0)]
# A GPU-hour price above this is a slip in any currency: a few dollars an hour stays below a
# few million units even in the currencies with the most units per dollar. Past it, a month's
# sums would drift towards sizes a float no longer holds to the cent.
MAX_GPU_HOUR = 10_000_000
GpuHourPrice = Annotated[float, Field(ge=0, le=MAX_GPU_HOUR)]


class IdlePolicy(StrEnum):
    """Who pays for capacity nobody used (docs/chargeback.md, "Who pays for idle").

    The names only: what each one means to the ledger is its rule in
    `exporter.ledger.costs.policies`.
    """

    SEPARATE = "separate"
    PROPORTIONAL = "proportional"
    RESERVATION = "reservation"

    @property
    def needs_kueue(self) -> bool:
        """Whether the policy charges Kueue quota, so the config must read `sources.kueue`."""
        return self in _CHARGES_KUEUE_QUOTA


# Stated here rather than asked of the ledger's rule, because config never imports the ledger;
# tests/test_policies.py holds it equal to each rule's `charges_gpu_quota`.
_CHARGES_KUEUE_QUOTA = frozenset({IdlePolicy.RESERVATION})


class StrictModel(BaseModel):
    # allow_inf_nan: `.inf` and `.nan` are YAML floats, and no setting means either.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

"""Per-record checks shared by the sources: bounds, drop reasons, tallies and de-duplication.

A record is one allocation, one GPU, one ClusterQueue resource or one LiteLLM row. A record
with a bad field is dropped and counted by reason. A record carries money, tokens or quantities
that some total adds up, so a read that dropped one would serve that total too low: the read
fails (refuse_dropped), the drops are counted all the same, and the last complete read stays.
A read also fails when it cannot be the whole truth (a short read, conflicting duplicates).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from exporter.errors import RecordsDropped, UpstreamIncomplete

__all__ = [
    "DROP_REASONS",
    "DUPLICATE",
    "MAX_COST",
    "MAX_GPUS",
    "MAX_LABEL",
    "MAX_TOKENS",
    "MISSING_FIELD",
    "NON_FINITE",
    "OUT_OF_RANGE",
    "WRONG_TYPE",
    "BadRecord",
    "Emptiness",
    "Tally",
    "count",
    "dedupe",
    "emptiness_of",
    "label",
    "number",
    "refuse_dropped",
]

NON_FINITE = "non_finite"
OUT_OF_RANGE = "out_of_range"
WRONG_TYPE = "wrong_type"
DUPLICATE = "duplicate"
MISSING_FIELD = "missing_field"
# The fixed label set of chargeback_source_records_dropped_total, pre-initialised to 0.
DROP_REASONS = (DUPLICATE, MISSING_FIELD, NON_FINITE, OUT_OF_RANGE, WRONG_TYPE)

# Money per record and window: a trillion is more than any cluster or proxy spends in a month,
# so anything at or above it is a corrupt value, and sums of many such records stay far from
# float overflow (1e12 x 1e6 records is still 1e18).
MAX_COST = 1e12
# GPUs (or cores) one record can stand for: a million GPUs is beyond any cluster built, so a
# record's GPU-hours stay under MAX_GPUS x its window's hours, and quota under 1e9 units.
MAX_GPUS = 1e6
# Token and request counts: a quadrillion tokens a month is ~4e8 tokens a second; more is junk.
MAX_TOKENS = 10**15
# Characters in a name that may become a label value (a team, queue, cohort, flavor, model,
# alias, namespace, node or pod label). Kubernetes names are at most 253 and label values 63;
# model names and aliases run to a few hundred at most; and remote-write stores refuse longer
# values (Mimir and Grafana Cloud at 2048 by default), so a longer one is junk or hostile.
MAX_LABEL = 1024

_T = TypeVar("_T")


class BadRecord(ValueError):
    """One record cannot be used; `reason` is one of DROP_REASONS."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


# How much of the first dropped record's reason a failed read quotes (names can be long).
_MAX_EXAMPLE = 200


class Tally(Counter[str]):
    """Drop counts of one refresh, by reason, and the first drop's reason in words."""

    example = ""

    def drop(self, exc: BadRecord) -> None:
        """Count one dropped record."""
        self[exc.reason] += 1
        if not self.example:
            self.example = str(exc)[:_MAX_EXAMPLE]

    def add(self, other: Tally) -> None:
        """Count another tally's drops here too, keeping the first example."""
        self.update(other)
        self.example = self.example or other.example

    def frozen(self) -> dict[str, int]:
        """The counts as a plain mapping for a snapshot."""
        return {reason: n for reason, n in sorted(self.items()) if n}

    def bad(self) -> int:
        """Snapshots dropped for a bad field (duplicates kept once are not bad)."""
        return sum(n for reason, n in self.items() if reason != DUPLICATE)


def number(
    value: Any,
    what: str,
    *,
    low: float,
    high: float,
    null: float | None = None,
    tiny: float = 0.0,
) -> float:
    """A finite JSON number in [low, high), zero or at least `tiny` in magnitude.

    `null` (if given) stands in for a JSON null.
    """
    if value is None:
        if null is None:
            raise BadRecord(MISSING_FIELD, f"{what} is missing")
        return null
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRecord(WRONG_TYPE, f"{what} is not a number")
    result = float(value)  # an int beyond float range raises OverflowError
    if not math.isfinite(result):
        raise BadRecord(NON_FINITE, f"{what} is not finite")
    if not low <= result < high:
        raise BadRecord(OUT_OF_RANGE, f"{what} is {result:g}, expected {low:g}..{high:g}")
    if result and abs(result) < tiny:
        raise BadRecord(OUT_OF_RANGE, f"{what} is {result:g}, below the resolution {tiny:g}")
    return result


def label(value: Any, what: str) -> str:
    """A name that may become a label value: text, at most MAX_LABEL characters, and valid
    UTF-8 (Python's JSON parser lets a lone surrogate like `\\udc80` through, and no exposition
    can be written with one in it)."""
    if not isinstance(value, str):
        raise BadRecord(WRONG_TYPE, f"{what} is not text")
    if len(value) > MAX_LABEL:
        raise BadRecord(OUT_OF_RANGE, f"{what} is {len(value)} characters, at most {MAX_LABEL}")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BadRecord(WRONG_TYPE, f"{what} is not valid UTF-8 text") from None
    return value


def count(value: Any, what: str) -> int:
    """A non-negative whole number below MAX_TOKENS (JSON may spell it 3.0); null is 0."""
    if value is None:
        return 0
    whole = number(value, what, low=0.0, high=float(MAX_TOKENS))
    if whole != int(whole):
        raise BadRecord(WRONG_TYPE, f"{what} is not a whole number")
    return int(whole)


def dedupe(
    source: str,
    items: Iterable[_T],
    key: Callable[[_T], Hashable],
    tally: Tally,
    *,
    same: Callable[[_T, _T], bool] | None = None,
) -> list[_T]:
    """Keep the first of identical duplicates (counted); conflicting ones fail the refresh.

    Overlapping pages repeat an entity unchanged; two different versions of one id mean the
    upstream changed under the read, and either version could be the wrong one.
    """
    equal = same or (lambda a, b: a == b)
    kept: dict[Hashable, _T] = {}
    for item in items:
        ident = key(item)
        if ident not in kept:
            kept[ident] = item
        elif equal(kept[ident], item):
            tally[DUPLICATE] += 1
        else:
            raise UpstreamIncomplete(f"{source}: {ident!r} was read twice with different values")
    return list(kept.values())


def refuse_dropped(source: str, tally: Tally, what: str) -> None:
    """Fail the read when it dropped a record with a bad field (RecordsDropped, `malformed`).

    Every record carries money, tokens or quantities some total adds up: served without it,
    that total would be wrong with the source up. Call it before the read is kept anywhere
    (a cache of closed days), so a later read cannot build on it either.
    """
    bad = tally.bad()
    if not bad:
        return
    reasons = ", ".join(f"{n} {r}" for r, n in tally.frozen().items() if r != DUPLICATE)
    raise RecordsDropped(
        f"{source}: {what} dropped: {bad} ({reasons}; first: {tally.example}); "
        "the totals they feed would be wrong without them, so the last complete read stays",
        tally.frozen(),
    )


class Emptiness:
    """Which parts of one client's reads held data, so that sudden emptiness waits for a second.

    An upstream that answers a part (a list, a date's activity) with nothing where the last read
    had data is more often a lost or half-restored read than the truth. Such a read fails
    (`incomplete`) and the last one stays; the next read that says the same confirms it, as an
    upstream that really holds nothing now would.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._had: dict[str, bool] = {}
        self._doubted: frozenset[str] = frozenset()

    def check(self, source: str, parts: Mapping[str, bool]) -> None:
        """Raise UpstreamIncomplete when a part that had data has none, unless already doubted.

        `parts` says, per part this read answered, whether it holds anything.
        """
        with self._lock:
            vanished = frozenset(p for p, has in parts.items() if not has and self._had.get(p))
            if vanished and vanished != self._doubted:
                self._doubted = vanished
                raise UpstreamIncomplete(
                    f"{source}: {', '.join(sorted(vanished))} came back empty after holding "
                    "data; keeping the last read until a later one says the same"
                )
            self._doubted = frozenset()
            self._had.update(parts)

    def held(self) -> dict[str, bool]:
        """Per part the accepted reads answered, whether the last one held anything."""
        with self._lock:
            return dict(self._had)

    def empty(self) -> frozenset[str]:
        """The parts the last accepted read answered with nothing (a one-shot reader, such as
        the report, reads these again to confirm them: it has no earlier read to doubt them)."""
        with self._lock:
            return frozenset(p for p, has in self._had.items() if not has)


# What each client's reads held, kept as long as the client (the refresher keeps one per source
# for the process's life; the report one per run).
_SEEN: weakref.WeakKeyDictionary[object, Emptiness] = weakref.WeakKeyDictionary()
_SEEN_LOCK = threading.Lock()


def emptiness_of(client: object) -> Emptiness:
    """The Emptiness of one client's reads, made on first use."""
    with _SEEN_LOCK:
        return _SEEN.setdefault(client, Emptiness())

"""Closed LiteLLM dates packed into arrays over the month's table of uses, and their totals.

A month of a thousand teams x fifty models keeps about 50,000 uses per date. As dicts of
structs that is some 12 MiB per date, in small objects that the interpreter cannot hand back
once transient decoding is interleaved with them; as arrays it is under 2 MiB, in a few large
buffers. Spend is a float array with NaN where the proxy reported none (validated spend is
never NaN, and NaN stays NaN under addition, as an unknown spend stays unknown).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from exporter.sources.litellm.daily import UsageMetrics
from exporter.sources.litellm.key_breakdown import DayUsage, Use

__all__ = ["PackedDates", "PackedDay", "Uses"]

_UNKNOWN = math.nan


@dataclass(frozen=True)
class PackedDay:
    """One date's use: positions in the use table (ascending) and each metric beside them."""

    index: array[int]
    spend: array[float]
    prompt: array[int]
    completion: array[int]
    requests: array[int]

    def same_as(self, other: PackedDay) -> bool:
        """Equal counts, and spend equal up to the proxy's own float summation order."""
        if (self.index, self.prompt, self.completion, self.requests) != (
            other.index,
            other.prompt,
            other.completion,
            other.requests,
        ):
            return False
        return all(_same_spend(a, b) for a, b in zip(self.spend, other.spend, strict=True))


def _same_spend(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@dataclass
class Uses:
    """The month's uses, each kept once, and the running totals of the packed dates added."""

    positions: dict[Use, int] = field(default_factory=dict)
    uses: list[Use] = field(default_factory=list)
    spend: array[float] = field(default_factory=lambda: array("d"))
    prompt: array[int] = field(default_factory=lambda: array("q"))
    completion: array[int] = field(default_factory=lambda: array("q"))
    requests: array[int] = field(default_factory=lambda: array("q"))
    seen: bytearray = field(default_factory=bytearray)

    def pack(self, usage: DayUsage) -> PackedDay:
        """One date's use as arrays, adding its new uses to the table."""
        positions, position = self.positions, self._position
        # Lists, then arrays: an array fills from a list several times faster than from a
        # generator, and a month packs some 700,000 uses.
        rows = sorted(
            [(positions.get(use) or position(use), metrics) for use, metrics in usage.items()]
        )
        metrics = [m for _, m in rows]
        return PackedDay(
            array("L", [p for p, _ in rows]),
            array("d", [_UNKNOWN if m.spend is None else m.spend for m in metrics]),
            array("q", [m.prompt_tokens for m in metrics]),
            array("q", [m.completion_tokens for m in metrics]),
            array("q", [m.requests for m in metrics]),
        )

    def unpack(self, day: PackedDay) -> DayUsage:
        """A packed date's use again, as usage metrics (in the table's order)."""
        uses = self.uses
        return {
            uses[p]: UsageMetrics(None if math.isnan(spend) else spend, prompt, completion, count)
            for p, spend, prompt, completion, count in zip(
                day.index, day.spend, day.prompt, day.completion, day.requests, strict=True
            )
        }

    def clear_totals(self) -> None:
        """Forget what was added (the uses stay in the table)."""
        count = len(self.uses)
        self.spend = array("d", bytes(8 * count))
        for name in ("prompt", "completion", "requests"):
            setattr(self, name, array("q", bytes(8 * count)))
        self.seen = bytearray(count)

    def add(self, days: Iterable[PackedDay]) -> None:
        """Add packed dates to the totals, in the order given (date order keeps sums exact)."""
        self._grow()
        spend, prompt, completion, requests = (
            self.spend,
            self.prompt,
            self.completion,
            self.requests,
        )
        seen = self.seen
        for day in days:
            for k, p in enumerate(day.index):
                spend[p] += day.spend[k]
                prompt[p] += day.prompt[k]
                completion[p] += day.completion[k]
                requests[p] += day.requests[k]
                seen[p] = 1

    def totals(self) -> DayUsage:
        """The totals of every use added so far, as usage metrics."""
        out: DayUsage = {}
        for p, use in enumerate(self.uses[: len(self.seen)]):
            if self.seen[p]:
                spend = self.spend[p]
                out[use] = UsageMetrics(
                    None if math.isnan(spend) else spend,
                    self.prompt[p],
                    self.completion[p],
                    self.requests[p],
                )
        return out

    def _position(self, use: Use) -> int:
        position = self.positions.get(use)
        if position is None:
            position = self.positions[use] = len(self.uses)
            self.uses.append(use)
        return position

    def _grow(self) -> None:
        missing = len(self.uses) - len(self.seen)
        if missing > 0:
            self.spend.frombytes(bytes(8 * missing))
            for values in (self.prompt, self.completion, self.requests):
                values.frombytes(bytes(8 * missing))
            self.seen.extend(bytes(missing))


class PackedDates(Mapping[str, DayUsage]):
    """The dates a read has found, each packed as it comes and unpacked one at a time on demand.

    A cold read of a month holds every date until the cache keeps them: as dicts of structs
    that was some 12 MiB a date at a thousand teams x fifty models, packed under 2 MiB.
    """

    def __init__(self, table: Uses | None = None) -> None:
        # The cache's own table when it is given: the cache then keeps the packed dates as
        # they are, rather than unpacking and packing them again.
        self.table = Uses() if table is None else table
        self._days: dict[str, PackedDay] = {}

    def packed(self, day: str) -> PackedDay:
        """A date as packed over `table`."""
        return self._days[day]

    def __setitem__(self, day: str, usage: DayUsage) -> None:
        self._days[day] = self.table.pack(usage)

    def __getitem__(self, day: str) -> DayUsage:
        return self.table.unpack(self._days[day])

    def __iter__(self) -> Iterator[str]:
        return iter(self._days)

    def __len__(self) -> int:
        return len(self._days)

"""What every bill source reads beside its own section: its name, the currencies it may bill in,
the UTC days of the month it reads, and the clock a file's age is judged by."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from exporter.errors import ExchangeRateError
from exporter.sources.checks import emptiness_of
from exporter.sources.reading import Reading

__all__ = ["DAY", "BillShared", "BillWindow", "confirm_held", "source_name", "window_of"]

DAY = timedelta(days=1)


def source_name(name: str) -> str:
    """The source's name in metrics and messages: its config key under `bills.sources`."""
    return f"bills.{name}"


@dataclass(frozen=True)
class BillShared:
    """One bill source's settings from outside its section, built once by the wiring."""

    name: str  # the configured key under bills.sources
    currency: str  # the exporter's currency
    rates: Mapping[str, float] = field(default_factory=dict)  # bills.currency_rates
    # Seconds since the epoch, for a file's age (a test gives its own, never the wall clock).
    clock: Callable[[], float] = time.time

    @property
    def source(self) -> str:
        """The source's name in metrics and messages."""
        return source_name(self.name)

    def currency_of(self, code: str) -> str:
        """The bill's currency, upper case, when it converts; ExchangeRateError otherwise.

        A bill in a currency with no rate cannot be reconciled without guessing one, so the
        whole read is refused rather than a line: every line of a bill is in its currency.
        """
        upper = code.strip().upper()
        if upper == self.currency or upper in self.rates:
            return upper
        shown = upper[:12] if upper.isascii() and upper.isprintable() else repr(code[:12])
        raise ExchangeRateError(
            f"{self.source}: billed in {shown}, which is not {self.currency} and has no rate "
            "in bills.currency_rates"
        )


@dataclass(frozen=True)
class BillWindow:
    """The UTC days a reading of a month asks a bill for: [first, last], read up to `until`.

    A bill is kept in UTC days (the APIs' buckets, FOCUS's ChargePeriodStart in UTC), so the
    month's days are its calendar dates, whatever the configured zone.
    """

    first: date
    last: date
    until: datetime  # aware, UTC: nothing at or after it has happened yet

    @property
    def start(self) -> datetime:
        """Midnight UTC of the first day."""
        return datetime.combine(self.first, datetime.min.time(), UTC)

    @property
    def end(self) -> datetime:
        """What a request asks up to: the month's end in UTC, or now in the open month."""
        return min(datetime.combine(self.last + DAY, datetime.min.time(), UTC), self.until)

    def holds(self, day: date) -> bool:
        """Whether `day` is one of the month's days."""
        return self.first <= day <= self.last

    def closed(self, day: date) -> bool:
        """Whether the whole of UTC `day` has passed by `until`."""
        return datetime.combine(day + DAY, datetime.min.time(), UTC) <= self.until


def window_of(reading: Reading) -> BillWindow:
    """The month's calendar dates, read up to now in the open month, whole once it closed
    (its last UTC day ends after the month does in a zone east of UTC)."""
    month = reading.month
    first, last = month.start.date(), (month.end - DAY).date()
    whole = datetime.combine(last + DAY, datetime.min.time(), UTC)
    return BillWindow(first, last, whole if reading.closed else reading.until.astimezone(UTC))


def confirm_held(client: object, shared: BillShared, window: BillWindow, held: bool) -> None:
    """Fail a month's read that comes back empty after this client read it with lines, until
    a second read says the same (checks.Emptiness): an empty answer where a bill stood is
    more often a lost read than a bill withdrawn, and would show every day as unbilled. Keyed
    by the month, so a new month starting empty is no such doubt."""
    emptiness_of(client).check(shared.source, {f"the bill of {window.first:%Y-%m}": held})

"""What a reconciliation found: per bill source and scope, billed against recorded, by day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from exporter.sources.bills.lines import BillKind

__all__ = ["BillFigures", "DayFigures", "Reconciliation", "Unmatched", "ratio"]


def ratio(billed: float, recorded: float) -> float | None:
    """Billed over recorded; None when nothing was recorded (no ratio, not infinity)."""
    return billed / recorded if recorded > 0 else None


@dataclass(frozen=True, slots=True)
class DayFigures:
    """One closed, billed UTC day: the bill's amount and what was recorded, both converted."""

    day: date
    billed: float
    recorded: float

    @property
    def difference(self) -> float:
        """Billed minus recorded: positive when the bill is higher."""
        return self.billed - self.recorded

    @property
    def ratio(self) -> float | None:
        """Billed over recorded."""
        return ratio(self.billed, self.recorded)


@dataclass(frozen=True, slots=True)
class Unmatched:
    """One model (or, for a cluster, the whole of its nodes) on one day, where bill and record
    differ: `amount` is billed minus recorded, in the exporter's currency."""

    line: str
    day: date | None  # None: the month as a whole (a cluster OpenCost did not read by day)
    billed: float
    recorded: float

    @property
    def amount(self) -> float:
        """Billed minus recorded."""
        return self.billed - self.recorded


@dataclass(frozen=True, kw_only=True)
class BillFigures:
    """One bill source's provider and scope, reconciled over the month's closed billed days.

    Amounts are in the exporter's currency: the bill's converted at `rate` (units of the
    exporter's currency per unit of `currency`), which the report states beside them.
    """

    source: str
    provider: str
    scope: str  # the projects or workspaces compared, joined by "+"; "all" or "cluster"
    kind: BillKind
    currency: str  # the bill's
    rate: float
    billed: float  # the month's billed days, billed
    recorded: float  # the same days, as recorded
    # Closed billed days of the month, in order; empty when the records are not by day (a
    # cluster whose OpenCost month was read whole: compared once its bill holds the month).
    days: tuple[DayFigures, ...]
    unmatched: tuple[Unmatched, ...]  # the largest differences first
    invoices: tuple[str, ...] = ()
    true_up: bool = False
    month_closed: bool = False  # every day of a closed month is billed
    days_billed: tuple[date, ...] = ()  # the days of the month the bill holds whole

    @property
    def difference(self) -> float:
        """The month's billed minus recorded."""
        return self.billed - self.recorded

    @property
    def ratio(self) -> float | None:
        """The month's billed over recorded."""
        return ratio(self.billed, self.recorded)

    @property
    def last_day(self) -> DayFigures | None:
        """The last closed day billed, if any."""
        return self.days[-1] if self.days else None


@dataclass(frozen=True, kw_only=True)
class Reconciliation:
    """Every bill source's figures, and the gateway spend no bill could claim."""

    currency: str  # the exporter's
    bills: tuple[BillFigures, ...]
    unknown_provider: float = 0.0  # gateway spend of models no rule gave a provider
    unconverted: int = 0  # bill lines in a currency without a rate, left out

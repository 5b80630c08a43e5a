"""The team table's operating columns: GPU-hours used and idle, occupancy, guaranteed GPUs, tokens.

Each figure is one the exporter already serves, read from the same typed result the costs come
from:

- `gpu_hours`: GPU-hours the team's allocations used this month (OpenCost's `gpuHours`, placed
  by the same rules as their cost);
- `idle_gpu_hours`: the month's idle GPU-hours (`chargeback_team_gpu_idle_seconds_month_to_date`
  / 3600, DCGM through Prometheus); empty when the DCGM source has no history;
- `guaranteed_gpus`: nominal GPU quota over the team's ClusterQueues (as `chargeback_quota_nominal`
  of the GPU resources: Kueue's quota now, or the month's average with `report.prometheus`);
- `occupancy_percent`: GPU-hours used over guaranteed GPU-hours (guaranteed GPUs x the hours of
  the period), so above 100 % the team borrowed; empty without a guarantee;
- `tokens`: LiteLLM prompt plus completion tokens.

A team folded into `__other__` counts there, as its cost does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any

from exporter.finance.report.footing import cents, largest_remainder, round_cents
from exporter.ledger.costs.quota import GPU_RESOURCES
from exporter.ledger.result import Chargeback

__all__ = [
    "OCCUPANCY",
    "USAGE_COLUMNS",
    "Measure",
    "PrintedUsage",
    "TeamUsage",
    "UsageColumn",
    "Write",
    "period_hours",
    "plain",
    "printed_usage",
    "team_usage",
    "usage_json",
]


@dataclass(frozen=True)
class TeamUsage:
    """One team's operating figures for the period; None where no source says."""

    gpu_hours: float | None = None
    idle_gpu_hours: float | None = None
    guaranteed_gpus: float | None = None
    tokens: int | None = None
    hours: float = 0.0  # the period's length, for occupancy

    @property
    def occupancy_percent(self) -> float | None:
        """GPU-hours used over guaranteed GPU-hours, in percent."""
        if not self.guaranteed_gpus or self.hours <= 0:
            return None
        return 100.0 * (self.gpu_hours or 0.0) / (self.guaranteed_gpus * self.hours)


def period_hours(chargeback: Chargeback) -> float:
    """Hours from the month's start to where the reading ends (the whole month once closed)."""
    reading = chargeback.reading
    return max(0.0, (reading.until.timestamp() - reading.month.start.timestamp()) / 3600.0)


def team_usage(chargeback: Chargeback) -> dict[str, TeamUsage]:
    """Each team's operating figures from one join."""
    fold = chargeback.counted_as
    used = _summed((fold(t), h) for t, h in chargeback.gpu_hours.items())
    gpus = chargeback.gpus
    idle_hours = gpus.idle_hours if gpus is not None and gpus.idle_hours is not None else ()
    idle = _summed((fold(t.team), t.hours) for t in idle_hours)
    quota = chargeback.quota or ()
    guaranteed = _summed((fold(q.team), q.nominal) for q in quota if q.resource in GPU_RESOURCES)
    tokens: dict[str, int] = defaultdict(int)
    for (team, _), use in sorted(chargeback.llm_usage.items()):
        tokens[fold(team)] += use.prompt_tokens + use.completion_tokens
    hours = period_hours(chargeback)
    teams = sorted(set(used) | set(idle) | set(guaranteed) | set(tokens))
    return {
        t: TeamUsage(used.get(t), idle.get(t), guaranteed.get(t), tokens.get(t), hours)
        for t in teams
    }


def _summed(pairs: Iterable[tuple[str, float]]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for team, value in sorted(pairs):
        out[team] += value
    return dict(out)


class Measure(Enum):
    """How an operating column's figure is written: an amount, a percentage or a count."""

    AMOUNT = "amount"  # two decimals
    PERCENT = "percent"  # one decimal
    COUNT = "count"  # a whole number


@dataclass(frozen=True)
class UsageColumn:
    """One operating column of the team table, in every format that prints it."""

    name: str  # its key in the text table, the CSV and the JSON report
    label: str  # its head in the statement
    value: Callable[[TeamUsage], float | None]
    measure: Measure
    foots: bool  # the total row sums it (a ratio is per team only)
    json_digits: int | None = None  # the JSON report rounds it to these digits


# What occupancy means, said where it is printed.
OCCUPANCY = (
    "Occupancy: the GPU-hours a team used over the GPU-hours its guaranteed GPUs (its Kueue "
    "nominal quota) offer in the period; above 100 % it ran on quota borrowed from others."
)
# The operating columns, in the order every format prints them.
USAGE_COLUMNS: tuple[UsageColumn, ...] = (
    UsageColumn("gpu_hours", "GPU-hours", lambda u: u.gpu_hours, Measure.AMOUNT, True),
    UsageColumn(
        "idle_gpu_hours", "Idle GPU-hours", lambda u: u.idle_gpu_hours, Measure.AMOUNT, True
    ),
    UsageColumn(
        "occupancy_percent",
        "Occupancy (%)",
        lambda u: u.occupancy_percent,
        Measure.PERCENT,
        False,
        json_digits=4,
    ),
    UsageColumn(
        "guaranteed_gpus", "Guaranteed GPUs", lambda u: u.guaranteed_gpus, Measure.AMOUNT, True
    ),
    UsageColumn("tokens", "Tokens", lambda u: u.tokens, Measure.COUNT, True),
)


# How a figure is written: CSV's plain `1116.00`, or the text table's and the page's locale.
Write = Callable[[Measure, float], str]


def plain(measure: Measure, value: float) -> str:
    """A figure as CSV writes it: a dot, no grouping (tools read it back)."""
    if measure is Measure.PERCENT:
        return format(value, ".1f")
    if measure is Measure.COUNT:
        return str(int(value))
    return format(value, ".2f")


@dataclass(frozen=True)
class PrintedUsage:
    """The operating columns as printed: a row of cells per team, and the total row."""

    rows: tuple[tuple[str, ...], ...]
    total: tuple[str, ...]


def printed_usage(usage: Sequence[TeamUsage | None], write: Write = plain) -> PrintedUsage:
    """The teams' operating cells, empty where no source says; every column that foots adds up
    to its printed total (amounts rounded by largest remainder, as money is), a ratio has none."""
    columns = [
        _column(c, [None if u is None else c.value(u) for u in usage], write) for c in USAGE_COLUMNS
    ]
    rows = tuple(zip(*(cells for cells, _ in columns), strict=True)) if usage else ()
    return PrintedUsage(rows, tuple(total for _, total in columns))


def _column(column: UsageColumn, values: list[float | None], write: Write) -> tuple[list[str], str]:
    known = [v for v in values if v is not None]
    if column.measure is not Measure.AMOUNT:
        cells = ["" if v is None else write(column.measure, v) for v in values]
        total = write(column.measure, sum(known)) if column.foots and known else ""
        return cells, total
    # Hundredths, rounded so the printed rows add to the printed total (the exact sum, rounded).
    exact = [cents(v) for v in known]
    printed = iter(largest_remainder(exact, round_cents(sum(exact, Decimal(0)))))
    cells = ["" if v is None else write(column.measure, next(printed) / 100) for v in values]
    total = write(column.measure, round_cents(sum(exact, Decimal(0))) / 100) if known else ""
    return cells, total if column.foots else ""


def usage_json(usage: TeamUsage | None) -> dict[str, Any]:
    """One team's operating figures as the JSON report carries them (null where unknown)."""
    usage = usage or TeamUsage()
    out: dict[str, Any] = {}
    for column in USAGE_COLUMNS:
        value = column.value(usage)
        digits = column.json_digits
        out[column.name] = value if value is None or digits is None else round(value, digits)
    return out

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from exporter.ledger.costs.quota import GPU_RESOURCES
from exporter.ledger.result import Chargeback

__all__ = [
    "USAGE_COLUMNS",
    "Measure",
    "TeamUsage",
    "UsageColumn",
    "period_hours",
    "team_usage",
    "usage_cells",
    "usage_json",
    "usage_total_cells",
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


def usage_cells(usage: TeamUsage | None, number: str = ",.2f") -> list[str]:
    """One team's operating columns as text (`number`: the amounts' format); empty where no
    source says."""
    if usage is None:
        return [""] * len(USAGE_COLUMNS)
    cells = []
    for column in USAGE_COLUMNS:
        value = column.value(usage)
        cells.append("" if value is None else format(value, _spec(column.measure, number)))
    return cells


def usage_total_cells(usage: Iterable[TeamUsage | None], number: str = ",.2f") -> list[str]:
    """The total row: the sums of the columns that foot; empty where none is known."""
    present = [u for u in usage if u is not None]
    cells = []
    for column in USAGE_COLUMNS:
        known = [v for u in present if (v := column.value(u)) is not None]
        foots = column.foots and known
        cells.append(format(sum(known), _spec(column.measure, number)) if foots else "")
    return cells


def _spec(measure: Measure, number: str) -> str:
    if measure is Measure.PERCENT:
        return number.replace(".2f", ".1f")
    if measure is Measure.COUNT:
        return "," if "," in number else ""
    return number


def usage_json(usage: TeamUsage | None) -> dict[str, Any]:
    """One team's operating figures as the JSON report carries them (null where unknown)."""
    usage = usage or TeamUsage()
    out: dict[str, Any] = {}
    for column in USAGE_COLUMNS:
        value = column.value(usage)
        digits = column.json_digits
        out[column.name] = value if value is None or digits is None else round(value, digits)
    return out

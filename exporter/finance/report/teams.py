"""The team table's operating columns: GPU-hours used and idle, occupancy, guaranteed GPUs, tokens.

Each figure is one the exporter already serves, read from the same typed result the costs come
from:

- `gpu_hours`: GPU-hours the team's allocations used this month (OpenCost's `gpuHours`, placed
  by the same rules as their cost);
- `idle_gpu_hours`: the month's idle GPU-hours (as `chargeback_team_gpu_idle_hours_month_to_date`
  serves them, DCGM through Prometheus); empty when the DCGM source has no history;
- `guaranteed_gpus`: nominal GPU quota over the team's ClusterQueues (as `chargeback_quota_nominal`
  of the GPU resources: Kueue's quota now, or the month's average with `report.prometheus`);
- `occupancy_percent`: GPU-hours used over guaranteed GPU-hours (guaranteed GPUs x the hours of
  the period), so above 100 % the team borrowed; empty without a guarantee;
- `tokens`: LiteLLM prompt plus completion tokens.

A team folded into `__other__` counts there, as its cost does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from exporter.ledger.costs.quota import GPU_RESOURCES
from exporter.ledger.result import Chargeback

__all__ = [
    "USAGE_COLUMNS",
    "TeamUsage",
    "period_hours",
    "team_usage",
    "usage_cells",
    "usage_json",
    "usage_total_cells",
]

USAGE_COLUMNS = ["gpu_hours", "idle_gpu_hours", "occupancy_percent", "guaranteed_gpus", "tokens"]


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


def usage_cells(usage: TeamUsage | None, number: str = ",.2f") -> list[str]:
    """The five columns of one team; empty where no source says."""
    if usage is None:
        return ["", "", "", "", ""]

    def opt(value: float | None, spec: str) -> str:
        return "" if value is None else format(value, spec)

    return [
        opt(usage.gpu_hours, number),
        opt(usage.idle_gpu_hours, number),
        opt(usage.occupancy_percent, number.replace(".2f", ".1f")),
        opt(usage.guaranteed_gpus, number),
        "" if usage.tokens is None else format(usage.tokens, "," if "," in number else ""),
    ]


def usage_total_cells(usage: Iterable[TeamUsage | None], number: str = ",.2f") -> list[str]:
    """The total row: sums of the additive columns; occupancy is per team only."""
    present = [u for u in usage if u is not None]

    def total(values: list[Any], spec: str) -> str:
        known = [v for v in values if v is not None]
        return format(sum(known), spec) if known else ""

    token_spec = "," if "," in number else ""
    return [
        total([u.gpu_hours for u in present], number),
        total([u.idle_gpu_hours for u in present], number),
        "",
        total([u.guaranteed_gpus for u in present], number),
        total([u.tokens for u in present], token_spec),
    ]


def usage_json(usage: TeamUsage | None) -> dict[str, Any]:
    """The five figures of one team as the JSON report carries them (null where unknown)."""
    if usage is None:
        usage = TeamUsage()
    occupancy = usage.occupancy_percent
    return {
        "gpu_hours": usage.gpu_hours,
        "idle_gpu_hours": usage.idle_gpu_hours,
        "occupancy_percent": None if occupancy is None else round(occupancy, 4),
        "guaranteed_gpus": usage.guaranteed_gpus,
        "tokens": usage.tokens,
    }

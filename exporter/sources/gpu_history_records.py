"""A month's GPU operation per team as the report reads it back (exporter/sources/gpu_history.py).

Types only, with no HTTP client: the report's tables import these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["GpuMonth", "GpuSeries", "TeamGpuMonth"]


@dataclass(frozen=True)
class GpuSeries:
    """The names the exporter publishes GPU operation under (the catalogue's)."""

    gpus: str
    utilisation: str
    kwh_per_hour: str
    co2e_per_hour: str
    break_even_utilisation: str
    break_even_ratio: str


@dataclass(frozen=True)
class TeamGpuMonth:
    """One team's GPU operation over the period; None where no series says."""

    team: str
    idle_gpu_hours: float | None
    utilisation: float | None
    kwh: float | None
    co2e_grams: float | None


@dataclass(frozen=True)
class GpuMonth:
    """Every team's GPU operation over the period, and each self-hosted model's utilisation."""

    teams: tuple[TeamGpuMonth, ...]
    serving_utilisation: Mapping[str, float]

    def team(self, name: str) -> TeamGpuMonth | None:
        """One team's figures, if any series named it."""
        return next((t for t in self.teams if t.team == name), None)

"""GPU series: each team's GPUs by state, utilisation and waste, and the month's idle hours."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from exporter.exposition.catalogue.gpus import (
    GPUS,
    TEAM_GPU_IDLE_SECONDS_MONTH_TO_DATE,
    TEAM_GPU_UTILIZATION_RATIO,
    TEAM_GPU_WASTE_COST_MONTH_TO_DATE,
    TEAM_GPU_WASTE_COST_PER_HOUR,
)
from exporter.exposition.catalogue.health import SOURCE_ENDPOINTS
from exporter.exposition.samples import Sample
from exporter.ledger.attribution import UNALLOCATED
from exporter.ledger.costs.gpus import TeamGpus, TeamIdleGpuHours
from exporter.ledger.result import Chargeback

__all__ = ["endpoint_samples", "gpu_samples", "idle_gpu_samples", "series"]

# The idle GPU-hours are exposed in GPU-seconds, Prometheus' base unit.
SECONDS_PER_HOUR = 3600.0


def series(chargeback: Chargeback) -> list[Sample]:
    """With DCGM: the GPUs now, the month's idle hours where it has history, its endpoints."""
    gpus = chargeback.gpus
    if gpus is None:
        return []
    return [
        *gpu_samples(gpus.teams),
        *idle_gpu_samples(gpus.idle_hours or ()),
        *endpoint_samples(gpus.endpoints),
    ]


def gpu_samples(teams: Iterable[TeamGpus]) -> list[Sample]:
    """`gpus` by state, and each team's utilisation and waste where they are known."""
    out: list[Sample] = []
    for t in teams:
        if t.allocated > 0:
            out.append(Sample.of(GPUS, t.busy, team=t.team, state="busy"))
            out.append(Sample.of(GPUS, t.idle, team=t.team, state="idle"))
        if t.team == UNALLOCATED:
            out.append(Sample.of(GPUS, t.unallocated, team=t.team, state="unallocated"))
        if t.utilisation is not None:
            out.append(Sample.of(TEAM_GPU_UTILIZATION_RATIO, t.utilisation, team=t.team))
        if t.waste_per_hour is not None:
            out.append(Sample.of(TEAM_GPU_WASTE_COST_PER_HOUR, t.waste_per_hour, team=t.team))
    return out


def idle_gpu_samples(idle: Iterable[TeamIdleGpuHours]) -> list[Sample]:
    """The month's idle GPU-seconds per team, and their cost where every model is priced."""
    out: list[Sample] = []
    for t in idle:
        seconds = t.hours * SECONDS_PER_HOUR
        out.append(Sample.of(TEAM_GPU_IDLE_SECONDS_MONTH_TO_DATE, seconds, team=t.team))
        if t.cost is not None:
            out.append(Sample.of(TEAM_GPU_WASTE_COST_MONTH_TO_DATE, t.cost, team=t.team))
    return out


def endpoint_samples(endpoints: Mapping[str, int]) -> list[Sample]:
    """How many endpoints the DCGM source found in each state."""
    return [
        Sample.of(SOURCE_ENDPOINTS, float(n), source="dcgm", state=state)
        for state, n in sorted(endpoints.items())
    ]

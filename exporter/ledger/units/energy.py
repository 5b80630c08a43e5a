"""Measured GPU power per team, its energy at the wall, its cost and emissions (pure).

A GPU's draw is dcgm-exporter's DCGM_FI_DEV_POWER_USAGE; a time-sliced GPU's draw is split
among its pods as its count is, and a GPU no pod holds is `__unallocated__`'s. A MIG instance
reports no power of its own, so a GPU in MIG mode adds nothing here. Energy at the wall is
the draw times the PUE of the GPU model's price build (1 without one); its cost is at that
build's tariff (no cost for a team holding a GPU model without one, rather than one too low);
emissions are the wall energy times `grid_co2e_grams_per_kwh`, when configured.

A GPU whose power sample was dropped (NaN, negative, out of range, DCGM's blank) has an unknown
draw this refresh, never a smaller one: its team (or `__unallocated__`) gets no power, energy,
cost or emissions figure until a read gives every one of its GPUs' draw again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.config.schema import Config
from exporter.config.unit_economics import PriceBuild
from exporter.gpu_names import canonical_model
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.sources.dcgm.records import GpuRecord

__all__ = ["TeamEnergy", "team_energy"]


@dataclass(frozen=True)
class TeamEnergy:
    """A team's GPUs' draw now, and what an hour of it is at the wall, costs and emits."""

    team: str
    watts: float
    kwh_per_hour: float
    cost_per_hour: float | None  # None: a GPU model of the team's has no tariff
    co2e_grams_per_hour: float | None  # None: no grid intensity configured


@dataclass
class _Tally:
    watts: float = 0.0
    kwh: float = 0.0
    cost: float = 0.0
    priced: bool = True


def team_energy(
    records: Iterable[GpuRecord], attributor: Attributor, config: Config
) -> tuple[TeamEnergy, ...]:
    """Power, energy, cost and emissions per team, from the GPUs that report power.

    A team one of whose GPUs' power sample was dropped is left out: the sum of the rest would
    read as a smaller draw.
    """
    builds: Mapping[str, PriceBuild] = {
        canonical_model(m): b for m, b in config.gpu_price_build.items()
    }
    tallies: dict[str, _Tally] = {}
    unknown: set[str] = set()
    for record in records:
        team = (
            attributor.place(record.namespace, record.labels).team
            if record.allocated
            else UNALLOCATED
        )
        if record.power_corrupt:
            unknown.add(team)
        if record.power_watts is None:
            continue
        tally = tallies.setdefault(team, _Tally())
        watts = record.power_watts * record.share
        build = builds.get(canonical_model(record.model))
        kwh = watts / 1_000.0 * (build.pue if build is not None else 1.0)
        tally.watts += watts
        tally.kwh += kwh
        if build is None:
            tally.priced = False
        else:
            tally.cost += kwh * build.energy_price_per_kwh
    grid = config.grid_co2e_grams_per_kwh
    return tuple(
        TeamEnergy(
            team,
            t.watts,
            t.kwh,
            t.cost if t.priced else None,
            None if grid is None else t.kwh * grid,
        )
        for team, t in sorted(tallies.items())
        if team not in unknown
    )

"""GPU state per team from one DCGM snapshot: busy, idle, unallocated, utilisation, waste (pure).

Rules:

- a GPU (or MIG slice, weighted by its share) with no pod is `unallocated`; it has no team, so
  it is reported on team `__unallocated__`; a MIG slice counts its compute slices over the GPU's
  (3g.40gb = 3/7 of an H100, 2g.12gb = 2/4 of an A30), and the slices no instance holds come as
  an unallocated record (sources.dcgm), so the states of a carved GPU add up to one GPU;
- an allocated GPU is `idle` when its utilisation is below the idle threshold, else `busy`; a
  GPU whose exporter reports no utilisation at all counts as busy, so waste is never overstated,
  and is left out of the utilisation mean;
- a GPU whose utilisation is unknown because its sample was corrupt (and no recent good value
  stood in for it, see sources.dcgm) also counts as busy, but its team gets no utilisation and
  no waste series for that refresh: a mean or a waste without that GPU would read wrong;
- utilisation is dcgm-exporter's own average over its collect interval (30 s by default): one
  scrape per refresh is that average, not a mean over the whole refresh interval;
- waste = share of idle allocated GPUs x the GPU-hour price of their model; a team with an idle
  GPU whose model has no price gets no waste series rather than a number that is too low;
- the month to date, when the source has history (through Prometheus): idle GPU-hours per team,
  and their cost at each model's current price, priced or absent by the same rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.sources.dcgm.records import DcgmSnapshot, GpuRecord

__all__ = [
    "PriceLookup",
    "TeamGpus",
    "TeamIdleGpuHours",
    "idle_gpu_hours",
    "model_price",
    "team_gpus",
]

PriceLookup = Callable[[str], float | None]


def model_price(prices: Mapping[str, float], default: float | None = None) -> PriceLookup:
    """A price lookup by GPU model name: exact key first, then case-insensitive, then default."""
    folded = {name.casefold(): price for name, price in prices.items()}

    def lookup(model: str) -> float | None:
        if model in prices:
            return prices[model]
        return folded.get(model.casefold(), default)

    return lookup


@dataclass
class _Tally:
    """What one team holds, accumulated in GPU shares."""

    busy: float = 0.0
    idle: float = 0.0
    unallocated: float = 0.0
    measured: float = 0.0  # share with a known utilisation
    weighted_use: float = 0.0  # sum of share x utilisation
    waste: float = 0.0
    unpriced: bool = False
    unknown: bool = False  # a GPU's sample was corrupt: its use this refresh is not known

    @property
    def allocated(self) -> float:
        """Share of GPUs that pods hold."""
        return self.busy + self.idle


@dataclass(frozen=True)
class TeamGpus:
    """What one team holds now, in GPU shares, and what its idle ones cost an hour.

    `utilisation` is None when no GPU of the team reports one, or one's sample was corrupt;
    `waste_per_hour` is None when the team holds none, or an idle one has no price or an
    unknown use (a figure that leaves some out would read too low).
    """

    team: str
    busy: float
    idle: float
    unallocated: float
    utilisation: float | None
    waste_per_hour: float | None

    @property
    def allocated(self) -> float:
        """Share of GPUs that pods hold."""
        return self.busy + self.idle


@dataclass(frozen=True)
class TeamIdleGpuHours:
    """The month's idle GPU-hours of one team, and their cost (None when a model is unpriced)."""

    team: str
    hours: float
    cost: float | None


def team_gpus(
    snapshot: DcgmSnapshot,
    attributor: Attributor,
    idle_threshold: float,
    price: PriceLookup,
) -> tuple[TeamGpus, ...]:
    """Each team's GPUs by state, utilisation and waste; `__unallocated__` holds the free ones."""
    tallies: dict[str, _Tally] = {UNALLOCATED: _Tally()}
    for record in snapshot.gpus:
        if not record.allocated:
            tallies[UNALLOCATED].unallocated += record.share
            continue
        team = attributor.place(record.namespace, record.labels).team
        _count(tallies.setdefault(team, _Tally()), record, idle_threshold, price)
    return tuple(_team_gpus(team, tallies[team]) for team in sorted(tallies))


def _team_gpus(team: str, tally: _Tally) -> TeamGpus:
    known = tally.measured > 0 and not tally.unknown
    priced = tally.allocated > 0 and not tally.unpriced and not tally.unknown
    return TeamGpus(
        team,
        tally.busy,
        tally.idle,
        tally.unallocated,
        tally.weighted_use / tally.measured if known else None,
        tally.waste if priced else None,
    )


def _count(tally: _Tally, record: GpuRecord, idle_threshold: float, price: PriceLookup) -> None:
    use = record.utilisation
    if use is None and record.corrupt:
        tally.unknown = True
    if use is not None:
        tally.measured += record.share
        tally.weighted_use += record.share * use
    if use is None or use >= idle_threshold:
        tally.busy += record.share
        return
    tally.idle += record.share
    hourly = price(record.model)
    if hourly is None:
        tally.unpriced = True
    else:
        tally.waste += record.share * hourly


def idle_gpu_hours(
    snapshot: DcgmSnapshot, attributor: Attributor, price: PriceLookup
) -> tuple[TeamIdleGpuHours, ...] | None:
    """The month's idle GPU-hours and their cost per team; None when the source has no history."""
    if snapshot.idle_hours is None:
        return None
    hours: dict[str, float] = {}
    cost: dict[str, float] = {}
    unpriced: set[str] = set()
    for entry in snapshot.idle_hours:
        team = attributor.place(entry.namespace, entry.labels).team
        hours[team] = hours.get(team, 0.0) + entry.hours
        hourly = price(entry.model) if entry.hours > 0 else 0.0
        if hourly is None:
            unpriced.add(team)  # a figure that leaves out some hours would read too low
        else:
            cost[team] = cost.get(team, 0.0) + entry.hours * hourly
    return tuple(
        TeamIdleGpuHours(team, hours[team], None if team in unpriced else cost.get(team, 0.0))
        for team in sorted(hours)
    )

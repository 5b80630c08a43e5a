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

from exporter.exposition.catalogue.gpus import (
    GPUS,
    TEAM_GPU_IDLE_HOURS_MONTH_TO_DATE,
    TEAM_GPU_UTILIZATION_RATIO,
    TEAM_GPU_WASTE_COST_MONTH_TO_DATE,
    TEAM_GPU_WASTE_COST_PER_HOUR,
)
from exporter.exposition.samples import Sample
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.sources.dcgm.source import DcgmSnapshot, GpuRecord

__all__ = ["PriceLookup", "gpu_samples", "idle_month_samples", "model_price"]

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


def gpu_samples(
    snapshot: DcgmSnapshot,
    attributor: Attributor,
    idle_threshold: float,
    price: PriceLookup,
) -> list[Sample]:
    """Samples for `gpus`, `team_gpu_utilization_ratio` and `team_gpu_waste_cost_per_hour`."""
    tallies: dict[str, _Tally] = {UNALLOCATED: _Tally()}
    for record in snapshot.gpus:
        if not record.allocated:
            tallies[UNALLOCATED].unallocated += record.share
            continue
        team = attributor.place(record.namespace, record.labels).team
        _count(tallies.setdefault(team, _Tally()), record, idle_threshold, price)
    return _samples(tallies)


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


def _samples(tallies: Mapping[str, _Tally]) -> list[Sample]:
    out: list[Sample] = []
    for team in sorted(tallies):
        tally = tallies[team]
        if tally.allocated > 0:
            out.append(Sample.of(GPUS, tally.busy, team=team, state="busy"))
            out.append(Sample.of(GPUS, tally.idle, team=team, state="idle"))
        if team == UNALLOCATED:
            out.append(Sample.of(GPUS, tally.unallocated, team=team, state="unallocated"))
        if tally.measured > 0 and not tally.unknown:
            ratio = tally.weighted_use / tally.measured
            out.append(Sample.of(TEAM_GPU_UTILIZATION_RATIO, ratio, team=team))
        if tally.allocated > 0 and not tally.unpriced and not tally.unknown:
            out.append(Sample.of(TEAM_GPU_WASTE_COST_PER_HOUR, tally.waste, team=team))
    return out


def idle_month_samples(
    snapshot: DcgmSnapshot, attributor: Attributor, price: PriceLookup
) -> list[Sample]:
    """The month's idle GPU-hours and their cost per team; none when the source has no history."""
    if snapshot.idle_hours is None:
        return []
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
    out: list[Sample] = []
    for team in sorted(hours):
        out.append(Sample.of(TEAM_GPU_IDLE_HOURS_MONTH_TO_DATE, hours[team], team=team))
        if team not in unpriced:
            waste = cost.get(team, 0.0)
            out.append(Sample.of(TEAM_GPU_WASTE_COST_MONTH_TO_DATE, waste, team=team))
    return out

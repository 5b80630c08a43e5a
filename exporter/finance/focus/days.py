"""A month's chargeback day by day: the month-to-date ledger at each local day's end.

The join is not linear (idle is shared by each window's usage, borrowing is measured against
the window's hours), so a day's cost is not the join of that day alone. Instead the month is
joined as it stood at the end of every local day, from the month's start, and a day's ledger is
the difference of two consecutive month-to-date ledgers. The differences add up exactly to the
last one, which is the month the report prints.

Days are local calendar days in the configured zone ([midnight, next midnight), 23 or 25 hours
across a DST change; in the month to date, today so far). The month is read once, by day
(`Reading.by_day`), and each day's month to date is asked of the snapshots (`as_of`): OpenCost
and LiteLLM sum their days up to it; Kueue and DCGM keep no history and answer the same for
every day.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from exporter.config.schema import Config
from exporter.finance.focus.resources import ResourceFigures, resource_figures
from exporter.ledger.attribution import OTHER, Attributor
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.costs.window import cost_lines, gpu_hours_by_team
from exporter.ledger.dimensions.joint import Combination
from exporter.ledger.join import join
from exporter.ledger.result import Chargeback
from exporter.sources.opencost.source import AllocationSet
from exporter.sources.reading import Reading, as_of
from exporter.sources.table import Records

__all__ = ["DayLedger", "daily_ledgers", "differences"]


@dataclass(frozen=True)
class DayLedger:
    """One local day of the month, [start, end): cost and quantity per (team, component).

    Quantities are what OpenCost and LiteLLM measured, in their units: GPU-hours, core-hours,
    byte-hours of memory and volumes, bytes sent, tokens. The same per (team, component,
    resource) for GPU and LLM components (`finance.focus.resources`), where the cost is the
    resource's weight in its cell rather than the cell's money.
    """

    start: datetime
    end: datetime
    costs: Mapping[tuple[str, str], float]
    quantities: Mapping[tuple[str, str], float] = field(default_factory=dict)
    resource_costs: ResourceFigures = field(default_factory=dict)
    resource_quantities: ResourceFigures = field(default_factory=dict)
    # Cost per (team, component, combination of dimension values): the day's own mix.
    combos: Mapping[tuple[str, str, Combination], float] = field(default_factory=dict)


_Figures = Mapping[tuple[str, str], float]
_Combos = Mapping[tuple[str, str, Combination], float]
# Month-to-date at a day's end: costs, quantities, resource costs and quantities, combinations.
_ToDate = tuple[_Figures, _Figures, ResourceFigures, ResourceFigures, _Combos]


def differences(bounds: list[tuple[datetime, datetime]], to_date: list[_ToDate]) -> list[DayLedger]:
    """Each day's figures: its month-to-date figures less the previous day's."""
    out = []
    previous: _ToDate = ({}, {}, {}, {}, {})
    for (start, end), current in zip(bounds, to_date, strict=True):
        costs, quantities = _minus(current[0], previous[0]), _minus(current[1], previous[1])
        by_resource = _minus(current[2], previous[2]), _minus(current[3], previous[3])
        combos = _minus(current[4], previous[4])
        out.append(DayLedger(start, end, costs, quantities, *by_resource, combos))
        previous = current
    return out


_K = TypeVar("_K", tuple[str, str], tuple[str, str, str], tuple[str, str, Combination])


def _minus(now: Mapping[_K, float], before: Mapping[_K, float]) -> dict[_K, float]:
    keys = sorted(set(now) | set(before))
    diff = {k: now.get(k, 0.0) - before.get(k, 0.0) for k in keys}
    return {k: v for k, v in diff.items() if v}


def daily_ledgers(
    config: Config, snapshots: Mapping[str, object], reading: Reading
) -> list[DayLedger]:
    """Join the month as it stood at the end of each local day; return the days' costs.

    `snapshots` were read `by_day` for `reading`; the last day is the whole month as read, so
    the days add up to the report's ledger.
    """
    attributor = Attributor(config)
    days = reading.day_ends()
    to_date: list[_ToDate] = []
    for day in days:
        records = Records.of({name: as_of(s, day) for name, s in snapshots.items()})
        if records.opencost is None:
            raise ValueError("the FOCUS export needs OpenCost's month, which was not read")
        whole = records.opencost.month
        chargeback = join(config, attributor, records, day, joint=bool(config.dimensions))
        to_date.append(
            (
                _costs(chargeback.month),
                _quantities(config, attributor, chargeback, whole),
                *resource_figures(config, attributor, chargeback, whole),
                _combinations(chargeback),
            )
        )
    return differences(reading.days(), to_date)


def _combinations(chargeback: Chargeback) -> _Combos:
    """Month-to-date cost per team (folded as the ledger is), component and combination."""
    folded = set(chargeback.folded_teams)
    out: dict[tuple[str, str, Combination], float] = defaultdict(float)
    for (team, component), mix in sorted(chargeback.joint.by_team.items()):
        for combo, amount in sorted(mix.items()):
            out[(OTHER if team in folded else team, component, combo)] += amount
    return dict(out)


def _costs(ledger: Ledger | None) -> _Figures:
    return dict(ledger.costs) if ledger is not None else {}


def _quantities(
    config: Config, attributor: Attributor, chargeback: Chargeback, whole: AllocationSet
) -> _Figures:
    """Month-to-date consumption per team and component, folded into `__other__` as the
    ledger is: OpenCost's GPU-hours and usage (placed on teams by the rules that place their
    cost), and LiteLLM's tokens."""
    folded = set(chargeback.folded_teams)

    def team(name: str) -> str:
        return OTHER if name in folded else name

    out: dict[tuple[str, str], float] = defaultdict(float)
    lines = cost_lines(whole, attributor)
    for name, used in sorted(gpu_hours_by_team(lines, whole).items()):
        out[(team(name), "gpu")] += used
    for line, allocation in zip(lines, whole.allocations, strict=True):
        for component, amount in allocation.usage.items():
            out[(team(line.placement.team), component)] += amount
    # Models the config does not declare are charged as external, as the join does.
    served = {m.model for m in config.llm_models if m.self_hosted is not None}
    for (name, model), use in sorted(chargeback.llm_usage.items()):
        component = "llm_serving" if model in served else "llm_external"
        out[(team(name), component)] += use.prompt_tokens + use.completion_tokens
    return dict(out)

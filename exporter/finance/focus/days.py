"""A month's chargeback day by day: each day the difference of two month-to-date ledgers.

The ledger gives the month to date at the end of every local day (`ledger.days`), from the
month's start; a day's figures are the difference of two consecutive ones, so the days add up
exactly to the last, which is the month the report prints. Days are local calendar days in the
configured zone ([midnight, next midnight), 23 or 25 hours across a DST change; in the month to
date, today so far).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from exporter.config.schema import Config
from exporter.ledger.costs.consumption import ResourceKey
from exporter.ledger.days import month_to_date_by_day
from exporter.ledger.dimensions.joint import Combination, JointSplit
from exporter.sources.reading import Reading

__all__ = ["DayLedger", "daily_ledgers", "differences"]


@dataclass(frozen=True)
class DayLedger:
    """One local day of the month, [start, end): cost and quantity per (team, component).

    Quantities are what OpenCost and LiteLLM measured, in their units: GPU-hours, core-hours,
    byte-hours of memory and volumes, bytes sent, tokens. The same per (team, component,
    resource) for GPU and LLM components (`ledger.costs.consumption`), where the cost is the
    resource's weight in its cell rather than the cell's money.
    """

    start: datetime
    end: datetime
    costs: Mapping[tuple[str, str], float]
    quantities: Mapping[tuple[str, str], float] = field(default_factory=dict)
    resource_costs: _Resources = field(default_factory=dict)
    resource_quantities: _Resources = field(default_factory=dict)
    # Cost per (team, component, combination of dimension values): the day's own mix.
    combos: Mapping[tuple[str, str, Combination], float] = field(default_factory=dict)


_Figures = Mapping[tuple[str, str], float]
_Resources = Mapping[ResourceKey, float]
_Combos = Mapping[tuple[str, str, Combination], float]
# Month-to-date at a day's end: costs, quantities, resource costs and quantities, combinations.
_ToDate = tuple[_Figures, _Figures, _Resources, _Resources, _Combos]


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
    """Each local day's figures, from the month to date at every day's end.

    `snapshots` were read `by_day` for `reading`; the last day is the whole month as read, so
    the days add up to the report's ledger.
    """
    to_date: list[_ToDate] = []
    for chargeback in month_to_date_by_day(config, snapshots, reading):
        if chargeback.month is None:
            raise ValueError("the FOCUS export needs OpenCost's month, which was not read")
        used = chargeback.consumption
        to_date.append(
            (
                dict(chargeback.month.costs),
                used.quantities,
                used.resource_costs,
                used.resource_quantities,
                _combinations(chargeback.joint),
            )
        )
    return differences(reading.days(), to_date)


def _combinations(joint: JointSplit) -> _Combos:
    """Month-to-date cost per team (counted as the ledger counts it), component, combination."""
    return {
        (team, component, combo): amount
        for (team, component), mix in sorted(joint.by_team.items())
        for combo, amount in sorted(mix.items())
    }

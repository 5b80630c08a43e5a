"""A closed month's chargeback day by day: the month-to-date ledger at each local day's end.

The join is not linear (idle is shared by each window's usage, borrowing is measured against
the window's hours), so a day's cost is not the join of that day alone. Instead the month is
joined as it stood at the end of every local day, from the month's start, and a day's ledger is
the difference of two consecutive month-to-date ledgers. The differences add up exactly to the
last one, which is the month the report prints.

Days are local calendar days in the configured zone ([midnight, next midnight), 23 or 25 hours
across a DST change), each read as its own explicit OpenCost window: `step=1d` steps forward by
24 hours from the window start, so across a DST change its sets would straddle local days.
Kueue is read once (it keeps no history); DCGM adds nothing to a ledger and is not read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeVar

from exporter.config.schema import Config
from exporter.finance.closed_month import ClosedMonth
from exporter.finance.focus.resources import ResourceFigures, resource_figures
from exporter.ledger.attribution import OTHER, Attributor
from exporter.ledger.chargeback import Ledger
from exporter.ledger.costs import cost_lines, gpu_hours_by_team
from exporter.ledger.join import Chargeback, join
from exporter.serve.refresher import Source
from exporter.sources.dcgm import source as dcgm
from exporter.sources.kind import section
from exporter.sources.kueue import source as kueue
from exporter.sources.litellm import source as litellm
from exporter.sources.opencost import source as opencost
from exporter.sources.opencost.source import AllocationSet
from exporter.sources.table import Records

__all__ = ["DayLedger", "daily_ledgers", "day_bounds", "differences"]


@dataclass(frozen=True)
class DayLedger:
    """One local day of the month, [start, end): cost and quantity per (team, component).

    Quantities are GPU-hours for `gpu` and tokens for `llm_serving` and `llm_external`; the
    same per (team, component, resource) for those components (`finance.focus.resources`),
    where the cost is the resource's weight in its cell rather than the cell's money.
    """

    start: datetime
    end: datetime
    costs: Mapping[tuple[str, str], float]
    quantities: Mapping[tuple[str, str], float] = field(default_factory=dict)
    resource_costs: ResourceFigures = field(default_factory=dict)
    resource_quantities: ResourceFigures = field(default_factory=dict)


def day_bounds(month: ClosedMonth) -> list[tuple[datetime, datetime]]:
    """Every local day of the month as [start, end), aware datetimes in the configured zone."""
    zone = month.start.tzinfo
    days = []
    day = month.start
    while day < month.end:
        # Local midnight of the next date: adding a day to a wall time absorbs DST shifts.
        following = (day.replace(tzinfo=None) + timedelta(days=1)).replace(tzinfo=zone)
        days.append((day, following))
        day = following
    return days


_Figures = Mapping[tuple[str, str], float]
# Month-to-date at a day's end: costs, quantities, resource costs, resource quantities.
_ToDate = tuple[_Figures, _Figures, ResourceFigures, ResourceFigures]


def differences(bounds: list[tuple[datetime, datetime]], to_date: list[_ToDate]) -> list[DayLedger]:
    """Each day's figures: its month-to-date figures less the previous day's."""
    out = []
    previous: _ToDate = ({}, {}, {}, {})
    for (start, end), current in zip(bounds, to_date, strict=True):
        costs, quantities = _minus(current[0], previous[0]), _minus(current[1], previous[1])
        by_resource = _minus(current[2], previous[2]), _minus(current[3], previous[3])
        out.append(DayLedger(start, end, costs, quantities, *by_resource))
        previous = current
    return out


_K = TypeVar("_K", tuple[str, str], tuple[str, str, str])


def _minus(now: Mapping[_K, float], before: Mapping[_K, float]) -> dict[_K, float]:
    keys = sorted(set(now) | set(before))
    diff = {k: now.get(k, 0.0) - before.get(k, 0.0) for k in keys}
    return {k: v for k, v in diff.items() if v}


def daily_ledgers(config: Config, sources: list[Source], month: ClosedMonth) -> list[DayLedger]:
    """Join the closed month as it stood at the end of each local day; return the days' costs.

    `sources` are the configured sources (their OpenCost client is not used: OpenCost is read
    here, one explicit window per day end). The last day is read exactly as the report reads
    the month, so the days add up to the report's ledger.
    """
    by_name = {s.name: s for s in sources}
    cfg = section(config.sources.opencost, opencost.SOURCE)
    client = opencost.build_client(cfg)
    by_node = config.idle_by_node
    try:
        rate = opencost.fetch_window(
            client, month.end - cfg.rate_window, month.end, with_node_costs=by_node
        )
        queues = _once(by_name, kueue.SOURCE, month.read_at)
        attributor = Attributor(config)
        bounds = day_bounds(month)
        to_date: list[_ToDate] = []
        for i, (_, end) in enumerate(bounds):
            last = i == len(bounds) - 1
            read_at = month.read_at if last else end - timedelta(microseconds=1)
            whole = opencost.fetch_window(client, month.start, end, with_node_costs=by_node)
            snapshots: dict[str, object] = {
                opencost.SOURCE: opencost.OpenCostSnapshot(rate=rate, month=whole)
            }
            if queues is not None:
                snapshots[kueue.SOURCE] = queues
            llm = _once(by_name, litellm.SOURCE, read_at)
            if llm is not None:
                snapshots[litellm.SOURCE] = llm
            chargeback = join(config, attributor, Records.of(snapshots), read_at)
            to_date.append(
                (
                    _costs(chargeback.month),
                    _quantities(config, attributor, chargeback, whole),
                    *resource_figures(config, attributor, chargeback, whole),
                )
            )
    finally:
        client.close()
    return differences(bounds, to_date)


def _once(by_name: Mapping[str, Source], name: str, at: datetime) -> object | None:
    source = by_name.get(name)
    if source is None or name == dcgm.SOURCE:
        return None
    fetch: Callable[[datetime], object] = source.fetch
    return fetch(at)


def _costs(ledger: Ledger | None) -> _Figures:
    return dict(ledger.costs) if ledger is not None else {}


def _quantities(
    config: Config, attributor: Attributor, chargeback: Chargeback, whole: AllocationSet
) -> _Figures:
    """Month-to-date GPU-hours and tokens per team, folded into `__other__` as the ledger is."""
    folded = set(chargeback.folded_teams)

    def team(name: str) -> str:
        return OTHER if name in folded else name

    out: dict[tuple[str, str], float] = defaultdict(float)
    hours = gpu_hours_by_team(cost_lines(whole, attributor), whole)
    for name, used in sorted(hours.items()):
        out[(team(name), "gpu")] += used
    # Models the config does not declare are charged as external, as the join does.
    served = {m.model for m in config.llm_models if m.self_hosted is not None}
    for (name, model), use in sorted(chargeback.llm_usage.items()):
        component = "llm_serving" if model in served else "llm_external"
        out[(team(name), component)] += use.prompt_tokens + use.completion_tokens
    return dict(out)

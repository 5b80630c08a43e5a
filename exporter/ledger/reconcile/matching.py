"""Bills matched against records: per bill source, provider and scope, day by closed day.

Only days the bill holds whole (`BillSnapshot.days_billed`) and that have ended are compared,
so a bill that has not reached a day yet is never read as a difference; the gateway's or
OpenCost's figures for those days are left out of the month's sums too.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date
from typing import TypeVar

from exporter.config.bills import (
    AnthropicCostsConfig,
    BillsConfig,
    FocusExportConfig,
    OpenAICostsConfig,
)
from exporter.ledger.reconcile.figures import BillFigures, DayFigures, Reconciliation, Unmatched
from exporter.ledger.reconcile.models import bill_model
from exporter.ledger.reconcile.recorded import Recorded
from exporter.sources.bills.lines import BilledLine, BillKind, BillSnapshot

__all__ = ["CLUSTER_LINE", "TOP_UNMATCHED", "reconcile"]

TOP_UNMATCHED = 10
CLUSTER_LINE = "cluster"  # the unmatched line of a cluster bill: its nodes matched as a whole
_HALF_CENT = 0.005
_Group = tuple[str, BillKind, str]  # (provider, kind, scope)
_Day = TypeVar("_Day", bound=date | None)


@dataclass(frozen=True)
class _Rates:
    currency: str
    rates: Mapping[str, float]

    def of(self, currency: str) -> float | None:
        return 1.0 if currency == self.currency else self.rates.get(currency)


def reconcile(
    config: BillsConfig,
    currency: str,
    bills: Mapping[str, BillSnapshot],
    recorded: Recorded,
    days: Iterable[date],
    *,
    closed: bool,
) -> Reconciliation:
    """Every configured bill source against the records over `days` (the month's ended days).

    A bill line in a currency without a rate is left out and counted, never guessed at.
    """
    month = frozenset(days)
    rates = _Rates(currency, config.currency_rates)
    figures: list[BillFigures] = []
    unconverted = 0
    for name in sorted(bills):
        cfg = config.sources.get(name)
        if cfg is None:
            continue
        snapshot = bills[name]
        billed = sorted(snapshot.days_billed & month)
        groups, skipped = _grouped(snapshot.lines, cfg, rates, frozenset(billed))
        unconverted += skipped
        for (provider, kind, scope), lines in sorted(groups.items()):
            whole = closed and month <= snapshot.days_billed
            group = (provider, kind, scope)
            found = _figures(name, group, lines, recorded, billed, rates, whole)
            figures.append(replace(found, true_up=cfg.true_up, month_closed=whole))
    return Reconciliation(
        currency=currency,
        bills=tuple(figures),
        unknown_provider=recorded.unknown_provider,
        unconverted=unconverted,
    )


def _grouped(
    lines: Iterable[BilledLine],
    cfg: FocusExportConfig | OpenAICostsConfig | AnthropicCostsConfig,
    rates: _Rates,
    billed: frozenset[date],
) -> tuple[dict[_Group, list[BilledLine]], int]:
    """The lines of billed days by (provider, kind, scope); and how many had no rate."""
    focus = isinstance(cfg, FocusExportConfig)
    scopes = () if isinstance(cfg, FocusExportConfig) else cfg.scopes
    named = None if isinstance(cfg, FocusExportConfig) else cfg.gateway_provider
    groups: dict[_Group, list[BilledLine]] = defaultdict(list)
    skipped = 0
    for line in lines:
        if line.day not in billed:
            continue
        if rates.of(line.currency) is None:
            skipped += 1
            continue
        if line.kind is BillKind.CLUSTER:
            groups[(line.provider, line.kind, CLUSTER_LINE)].append(line)
            continue
        if scopes and line.scope not in scopes:
            continue
        provider = named or line.provider
        groups[(provider, line.kind, "+".join(scopes) or "all")].append(line)
    if not focus and named and not groups and billed:
        # A provider's API that closed days and billed nothing on them: drift if we recorded.
        groups[(named, BillKind.LLM, "+".join(scopes) or "all")] = []
    return groups, skipped


def _figures(
    source: str,
    group: _Group,
    lines: list[BilledLine],
    recorded: Recorded,
    billed_days: list[date],
    rates: _Rates,
    whole: bool,
) -> BillFigures:
    """One group's figures: by day where the records are by day, else (a cluster whose
    OpenCost month was read whole) the month at once, and only when the bill holds all of it."""
    provider, kind, scope = group
    billed: dict[tuple[date, str], float] = defaultdict(float)
    for line in lines:
        key = CLUSTER_LINE if kind is BillKind.CLUSTER else bill_model(line.model or "")
        billed[(line.day, key)] += line.amount * (rates.of(line.currency) or 0.0)
    ours = _recorded(recorded, provider, kind, frozenset(billed_days))
    days: tuple[DayFigures, ...] = ()
    if ours is not None:
        days = _days(billed, ours, billed_days)
        month = (math.fsum(d.billed for d in days), math.fsum(d.recorded for d in days))
        unmatched = _unmatched(billed, ours)
    elif kind is BillKind.CLUSTER and whole and recorded.cluster_month is not None:
        month = (math.fsum(billed.values()), recorded.cluster_month)
        unmatched = _unmatched({(None, CLUSTER_LINE): month[0]}, {(None, CLUSTER_LINE): month[1]})
    else:  # nothing recorded to hold this bill against yet
        month, unmatched, billed_days = (0.0, 0.0), (), []
    currencies = sorted({line.currency for line in lines})
    currency = currencies[0] if len(currencies) == 1 else rates.currency
    return BillFigures(
        source=source,
        provider=provider,
        scope=scope,
        kind=kind,
        currency=currency,
        rate=rates.of(currency) or 1.0,
        billed=month[0],
        recorded=month[1],
        days=days,
        unmatched=unmatched,
        invoices=tuple(sorted({line.invoice for line in lines if line.invoice})),
        days_billed=tuple(billed_days),
    )


def _days(
    billed: Mapping[tuple[date, str], float],
    recorded: Mapping[tuple[date, str], float],
    days: list[date],
) -> tuple[DayFigures, ...]:
    day_billed: dict[date, float] = defaultdict(float)
    day_recorded: dict[date, float] = defaultdict(float)
    for (day, _), amount in billed.items():
        day_billed[day] += amount
    for (day, _), amount in recorded.items():
        day_recorded[day] += amount
    return tuple(DayFigures(d, day_billed[d], day_recorded[d]) for d in days)


def _recorded(
    recorded: Recorded, provider: str, kind: BillKind, days: frozenset[date]
) -> dict[tuple[date, str], float] | None:
    """What was recorded on the billed days, by (day, line); None: not known by day."""
    if kind is BillKind.CLUSTER:
        if recorded.cluster is None:
            return None
        return {(d, CLUSTER_LINE): v for d, v in recorded.cluster.items() if d in days}
    if recorded.llm is None:
        return None
    out: dict[tuple[date, str], float] = defaultdict(float)
    for (who, model, day), amount in recorded.llm.items():
        if who == provider and day in days:
            out[(day, model)] += amount
    return dict(out)


def _unmatched(
    billed: Mapping[tuple[_Day, str], float], recorded: Mapping[tuple[_Day, str], float]
) -> tuple[Unmatched, ...]:
    """The largest differences by (line, day), at least half a cent, largest first."""
    keys = billed.keys() | recorded.keys()
    found = [
        Unmatched(line, day, billed.get((day, line), 0.0), recorded.get((day, line), 0.0))
        for day, line in keys
    ]
    found = [u for u in found if abs(u.amount) >= _HALF_CENT]
    found.sort(key=lambda u: (-abs(u.amount), u.day or date.min, u.line))
    return tuple(found[:TOP_UNMATCHED])

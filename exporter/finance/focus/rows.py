"""FOCUS 1.2 rows of a month: per team, component, resource and local day, to the cent.

Each printed cell of the report (a team's component for the month) is split over the month's
days in proportion to that day's share of it, by largest remainder, so the days of a cell add
up to the printed cell and every row to the report's total. A cell whose days disagree in sign
with the month, or that has no daily figure, is spread over the days by their hours.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_FLOOR, Decimal
from functools import lru_cache

from exporter.finance.focus.columns import FocusRow
from exporter.finance.focus.days import DayLedger
from exporter.finance.focus.resources import (
    NO_RESOURCE,
    RESOURCE_COMPONENTS,
    Resource,
    resource,
    split,
)
from exporter.finance.focus.services import Service, service
from exporter.finance.focus.tags import Share, Tagging, combination_cents
from exporter.finance.report.figures import Report
from exporter.finance.report.footing import largest_remainder
from exporter.ledger.attribution import IDLE, OTHER, UNALLOCATED
from exporter.ledger.costs.components import Component

__all__ = ["FocusContext", "apportion", "focus_rows", "utc_stamp"]

_CENT = Decimal("0.01")
_QUANTITY = Decimal("0.000001")


@dataclass(frozen=True)
class FocusContext:
    """What every row of one export shares: who provides and invoices, in what, for which
    month, of which cluster, and whether the month is closed (an invoice) or to date."""

    currency: str
    month_start: datetime
    month_end: datetime
    cluster: str
    provider: str
    invoice_issuer: str
    invoice_id: str | None  # None in the month to date: nothing is invoiced yet
    publishers: Mapping[str, str] = field(default_factory=dict)  # LLM model -> its maker
    quota_basis: str | None = None  # what quota figures rest on (report.QUOTA_BASIS keys)
    # The provider invoices a closed month's true-up rows close on (FOCUS has one InvoiceId
    # a row, this export's; the rows' ChargeDescription names theirs).
    true_up_invoices: tuple[str, ...] = ()

    @property
    def month_to_date(self) -> bool:
        """The month is still open: its figures are provisional and not invoiced."""
        return self.invoice_id is None

    @property
    def billing_account(self) -> str:
        """The cluster's chargeback account: one per cluster, so exports never share ids."""
        return f"chargeback/{self.cluster}"


@lru_cache(maxsize=128)  # a month has some 33 distinct instants; rows repeat them
def utc_stamp(moment: datetime) -> str:
    """FOCUS 1.2 Date/Time Format: `YYYY-MM-DDTHH:mm:ssZ`, in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def apportion(cents: int, weights: Sequence[Decimal], hours: Sequence[Decimal]) -> list[int]:
    """Split whole cents over days by weight (else by hours), adding up exactly to `cents`."""
    sign = 1 if cents >= 0 else -1
    total = sum(weights, Decimal(0))
    if total == 0 or any(w * sign < 0 for w in weights):
        weights, total = hours, sum(hours, Decimal(0))
    exact = [Decimal(cents) * w / total for w in weights]
    # The last share takes the division's dust, so the exact shares add up to the cell.
    exact[-1] = Decimal(cents) - sum(exact[:-1], Decimal(0))
    return largest_remainder(exact, cents)


def focus_rows(
    report: Report, days: Sequence[DayLedger], ctx: FocusContext, by: Tagging | None = None
) -> list[FocusRow]:
    """Every non-empty (team, component, combination, resource, day) of the report as a row.

    In report order: team, component, then the combination of dimension values (sorted), then
    resource by name (the unknown one last), then day. `Tags` carries the team and, with `by`,
    every dimension's value (`finance.focus.tags`).
    """
    # Timestamps: two datetimes in one zone subtract as wall time (24 h on a 25-hour day).
    hours = [Decimal(repr((d.end.timestamp() - d.start.timestamp()) / 3600.0)) for d in days]
    tagging = by or Tagging()
    cells = combination_cents(report, tagging)
    names = _resource_names(days)
    rows: list[FocusRow] = []
    for team_row in report.rows:
        team = team_row.team
        for component in report.components:
            shares = cells[(team, component)]
            weights = _day_weights(team, component, shares, days)
            for n, combo in enumerate(shares):
                tags = _tags(team, tagging.names, combo.combination)
                key = (team, component, combo.combination)
                own = [_day(d, key) for d in days] if len(shares) > 1 else None
                for part in _parts(team, component, combo.cents, days, names):
                    by_day = _own_days(part.weights, own, part.cents)
                    cents = apportion(part.cents, by_day, hours) if part.cents else None
                    for i, day in enumerate(days):
                        share = cents[i] if cents else 0
                        whole = _quantity(component, part.quantities[i])
                        quantity = _quantity_share(whole, weights[i], n)
                        usage = _is_usage(team, share, quantity)
                        # A day without cost is kept only when it measured something: a period
                        # with nothing consumed and nothing charged is no charge.
                        if share or usage:
                            shown = quantity if usage else None
                            rows.append(
                                _row(ctx, team, component, day, share, shown, part.resource, tags)
                            )
    return rows


def _day_weights(
    team: str, component: str, shares: Sequence[Share], days: Sequence[DayLedger]
) -> list[list[Decimal]]:
    """Each day's weight of each combination of a cell: the day's own cost by combination
    where it has a usable one (all of one sign, not nothing), else the month's."""
    month = [Decimal(repr(abs(s.weight))) for s in shares]
    if len(shares) == 1:
        return [month] * len(days)
    out = []
    for day in days:
        own = [Decimal(repr(day.combos.get((team, component, s.combination), 0.0))) for s in shares]
        total = sum(own, Decimal(0))
        usable = total != 0 and all(w * total >= 0 for w in own)
        out.append([abs(w) for w in own] if usable else month)
    return out


def _day(day: DayLedger, key: tuple[str, str, tuple[str, ...]]) -> Decimal:
    return Decimal(repr(day.combos.get(key, 0.0)))


def _own_days(team_days: list[Decimal], own: list[Decimal] | None, cents: int) -> list[Decimal]:
    """A combination's cents follow its own days when the days know it (every day of the
    cell's sign, some not nothing); else its team's days, in the month's proportions."""
    if own is None or not any(own):
        return team_days
    sign = 1 if cents >= 0 else -1
    if any(w * sign < 0 for w in own):
        return team_days
    return own


def _tags(team: str, names: Sequence[str], combination: Sequence[str]) -> str:
    return json.dumps({"team": team, **dict(zip(names, combination, strict=True))}, sort_keys=True)


def _quantity_share(whole: Decimal | None, weights: Sequence[Decimal], n: int) -> Decimal | None:
    """Combination n's part of a row's quantity: rounded down to the sixth decimal, the last
    taking the rest, so the parts add up to the row's quantity (never below zero)."""
    if whole is None or whole <= 0 or len(weights) == 1:
        return whole
    total = sum(weights, Decimal(0))

    def down(w: Decimal) -> Decimal:
        return (whole * w / total).quantize(_QUANTITY, rounding=ROUND_FLOOR)

    if n < len(weights) - 1:
        return down(weights[n])
    return whole - sum((down(w) for w in weights[:-1]), Decimal(0))


def _resource_names(days: Sequence[DayLedger]) -> dict[tuple[str, str], list[str]]:
    """Each (team, component)'s resources over the month, the unknown one last."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for d in days:
        for t, c, n in (*d.resource_costs, *d.resource_quantities):
            found[(t, c)].add(n)
    return {k: sorted(v, key=lambda n: (n == NO_RESOURCE, n)) for k, v in found.items()}


@dataclass(frozen=True)
class _Part:
    """A cell's share for one resource (or the whole cell): its cents and its figures by day."""

    resource: Resource | None
    cents: int
    weights: list[Decimal]
    quantities: list[float]


def _parts(
    team: str,
    component: str,
    cell: int,
    days: Sequence[DayLedger],
    resources: Mapping[tuple[str, str], list[str]],
) -> list[_Part]:
    key = (team, component)
    names = resources.get(key, [])
    if component not in RESOURCE_COMPONENTS or not names:
        weights = [Decimal(repr(d.costs.get(key, 0.0))) for d in days]
        return [_Part(None, cell, weights, [d.quantities.get(key, 0.0) for d in days])]
    by_day = {
        n: [Decimal(repr(d.resource_costs.get((team, component, n), 0.0))) for d in days]
        for n in names
    }
    shares = split(cell, names, [sum(by_day[n], Decimal(0)) for n in names])
    return [
        _Part(
            resource(component, n),
            shares[n],
            by_day[n],
            [d.resource_quantities.get((team, component, n), 0.0) for d in days],
        )
        for n in names
    ]


def _quantity(component: str, measured: float) -> Decimal | None:
    """What the upstream measured, in the component's FOCUS unit; None for no meter."""
    meter = service(component).meter
    if meter is None:
        return None
    return (Decimal(repr(measured)) / meter.per).quantize(_QUANTITY)


def _is_usage(team: str, cents: int, quantity: Decimal | None) -> bool:
    """Usage is consumption: measured, never negative, and not idle capacity."""
    return team != IDLE and quantity is not None and quantity > 0 and cents >= 0


def _number(value: Decimal) -> str:
    """FOCUS Numeric Format, always with a decimal point: plain digits, no exponent.

    FOCUS types quantities as Decimal, and a reader that infers types from a CSV (the FinOps
    Foundation's validator among them) takes a column of whole numbers for integers.
    """
    text = format(value.normalize(), "f")
    if text in ("-0", "0"):
        text = "0"
    return text if "." in text else f"{text}.0"


def _description(service_: Service, team: str, res: Resource | None, of: str = "") -> str:
    on = f" on {res.name}" if res else ""
    return f"{service_.description}{of}{on} for team {team}"


def _invoices(ctx: FocusContext, component: str) -> str:
    if component != Component.TRUE_UP or not ctx.true_up_invoices:
        return ""
    return f" {', '.join(ctx.true_up_invoices)}"


def _publisher(ctx: FocusContext, component: str, res: Resource | None) -> str:
    # The model's maker publishes an LLM row; the platform publishes everything it runs.
    if res is not None and component.startswith("llm_"):
        return ctx.publishers.get(res.name, ctx.provider)
    return ctx.provider


def _row(
    ctx: FocusContext,
    team: str,
    component: str,
    day: DayLedger,
    cents: int,
    quantity: Decimal | None,
    res: Resource | None = None,
    tags: str | None = None,
) -> FocusRow:
    """One row; `quantity` is set exactly when the row is Usage."""
    named = service(component)
    money = format((Decimal(cents) / 100).quantize(_CENT), "f")
    shown = _number(quantity) if quantity is not None else None
    unit = named.meter.unit if shown is not None and named.meter else None
    return FocusRow(
        BilledCost=money,
        BillingAccountId=ctx.billing_account,
        BillingAccountName=f"Chargeback of {ctx.cluster}",
        BillingCurrency=ctx.currency,
        BillingPeriodEnd=utc_stamp(ctx.month_end),
        BillingPeriodStart=utc_stamp(ctx.month_start),
        ChargeCategory="Usage" if shown is not None else "Adjustment",
        ChargeClass=None,
        ChargeDescription=_description(named, team, res, _invoices(ctx, component)),
        ChargeFrequency="Usage-Based",
        ChargePeriodEnd=utc_stamp(day.end),
        ChargePeriodStart=utc_stamp(day.start),
        ConsumedQuantity=shown,
        ConsumedUnit=unit,
        ContractedCost=money,
        EffectiveCost=money,
        InvoiceId=ctx.invoice_id,
        InvoiceIssuerName=ctx.invoice_issuer,
        ListCost=money,
        PricingQuantity=shown,
        PricingUnit=unit,
        ProviderName=ctx.provider,
        PublisherName=_publisher(ctx, component, res),
        ResourceId=f"{ctx.cluster}/{res.id}" if res else None,
        ResourceName=res.name if res else None,
        ResourceType=res.type if res else None,
        ServiceCategory=named.category,
        ServiceName=named.name,
        ServiceSubcategory=named.subcategory,
        SubAccountId=team,
        SubAccountName=team,
        Tags=tags if tags is not None else json.dumps({"team": team}, sort_keys=True),
        x_ChargePeriodLocalDate=day.start.date().isoformat(),
        x_Cluster=ctx.cluster,
        x_Component=component,
        x_MonthToDate="true" if ctx.month_to_date else "false",
        x_QuotaBasis=ctx.quota_basis,
        x_Reserved="true" if team in (IDLE, OTHER, UNALLOCATED) else "false",
    )

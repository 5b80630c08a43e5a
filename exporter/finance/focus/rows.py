"""FOCUS 1.2 rows of a closed month: per team, component, resource and local day, to the cent.

Each printed cell of the report (a team's component for the month) is split over the month's
days in proportion to that day's share of it, by largest remainder, so the days of a cell add
up to the printed cell and every row to the report's total. A cell whose days disagree in sign
with the month, or that has no daily figure, is spread over the days by their hours.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from exporter.finance.focus.columns import FocusRow
from exporter.finance.focus.days import DayLedger
from exporter.finance.focus.resources import (
    NO_RESOURCE,
    RESOURCE_COMPONENTS,
    Resource,
    resource,
    split,
)
from exporter.finance.footing import largest_remainder
from exporter.finance.report import Report
from exporter.ledger.attribution import IDLE, OTHER, UNALLOCATED

__all__ = [
    "SERVICES",
    "FocusContext",
    "Service",
    "apportion",
    "focus_rows",
    "utc_stamp",
]

_CENT = Decimal("0.01")
_QUANTITY = Decimal("0.000001")


@dataclass(frozen=True)
class Service:
    """How FOCUS names what one component of the ledger charges for."""

    name: str
    category: str
    subcategory: str
    unit: str  # PricingUnit/ConsumedUnit of a Usage row; "" for an Adjustment
    description: str


# Idle, borrowed and lent quota move money between teams: no quantity was consumed for them,
# so they are Adjustment rows (FOCUS 1.2 ChargeCategory), which carry no consumed quantity.
SERVICES: Mapping[str, Service] = {
    "gpu": Service("GPU Compute", "Compute", "Containers", "GPU-Hours", "GPU time"),
    "cpu": Service("CPU Compute", "Compute", "Containers", "Hours", "CPU allocation"),
    "ram": Service("Memory", "Compute", "Containers", "Hours", "Memory allocation"),
    "storage": Service(
        "Persistent Volumes", "Storage", "Block Storage", "Hours", "Persistent volume allocation"
    ),
    "network": Service(
        "Network Egress", "Networking", "Network Connectivity", "Hours", "Network transfer"
    ),
    "other": Service("Cluster Services", "Compute", "Other (Compute)", "Hours", "Other costs"),
    "idle_share": Service("Idle Capacity", "Compute", "Containers", "", "Share of idle capacity"),
    "borrowed": Service("GPU Quota", "Compute", "Containers", "", "GPU quota borrowed"),
    "lent": Service("GPU Quota", "Compute", "Containers", "", "GPU quota lent (credit)"),
    "llm_serving": Service(
        "Self-hosted LLM Serving",
        "AI and Machine Learning",
        "Generative AI",
        "Tokens",
        "Self-hosted model serving, by tokens sent",
    ),
    "llm_external": Service(
        "External LLM APIs",
        "AI and Machine Learning",
        "Generative AI",
        "Tokens",
        "External model spend through the LiteLLM proxy",
    ),
}
_QUANTIFIED = frozenset({"gpu", "llm_serving", "llm_external"})


@dataclass(frozen=True)
class FocusContext:
    """What every row of one export shares: who bills, in what, for which month."""

    currency: str
    month_start: datetime
    month_end: datetime
    provider: str
    billing_account: str
    quota_basis: str | None = None  # what quota figures rest on (report.QUOTA_BASIS keys)


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


def focus_rows(report: Report, days: Sequence[DayLedger], ctx: FocusContext) -> list[FocusRow]:
    """Every non-empty (team, component, resource, day) of the report as a FOCUS row.

    In report order: team, component, then resource by name (the unknown one last), then day.
    """
    # Timestamps: two datetimes in one zone subtract as wall time (24 h on a 25-hour day).
    hours = [Decimal(repr((d.end.timestamp() - d.start.timestamp()) / 3600.0)) for d in days]
    rows: list[FocusRow] = []
    for team_row in report.rows:
        for component in report.components:
            cell = int((team_row.costs[component] * 100).to_integral_value())
            for part in _parts(team_row.team, component, cell, days):
                shares = apportion(part.cents, part.weights, hours) if part.cents else None
                for i, (day, day_hours) in enumerate(zip(days, hours, strict=True)):
                    share = shares[i] if shares else 0
                    quantity = _quantity(component, part.quantities[i], day_hours)
                    # A day without cost is kept only when it measured something (GPU-hours,
                    # tokens): a period's hours alone are not a charge.
                    measured = component in _QUANTIFIED and quantity is not None and quantity != 0
                    if share or measured:
                        rows.append(
                            _row(ctx, team_row.team, component, day, share, quantity, part.resource)
                        )
    return rows


@dataclass(frozen=True)
class _Part:
    """A cell's share for one resource (or the whole cell): its cents and its figures by day."""

    resource: Resource | None
    cents: int
    weights: list[Decimal]
    quantities: list[float]


def _parts(team: str, component: str, cell: int, days: Sequence[DayLedger]) -> list[_Part]:
    key = (team, component)
    names = sorted(
        {
            n
            for d in days
            for t, c, n in (*d.resource_costs, *d.resource_quantities)
            if (t, c) == key
        },
        key=lambda n: (n == NO_RESOURCE, n),
    )
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


def _quantity(component: str, measured: float, day_hours: Decimal) -> Decimal | None:
    if not SERVICES[component].unit:
        return None
    if component in _QUANTIFIED:
        return Decimal(repr(measured)).quantize(_QUANTITY)
    # OpenCost's core- and byte-hours do not travel through the ledger: these rows price the
    # team's allocation over the charge period, so the period's hours are the quantity.
    return day_hours.quantize(_QUANTITY)


def _number(value: Decimal) -> str:
    """FOCUS Numeric Format: plain digits, one decimal point, no exponent, no plus sign."""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def _description(service: Service, team: str, res: Resource | None) -> str:
    on = f" on {res.name}" if res else ""
    return f"{service.description}{on} for team {team}"


def _category(team: str, component: str) -> str:
    service = SERVICES[component]
    return "Usage" if service.unit and team != IDLE else "Adjustment"


def _row(
    ctx: FocusContext,
    team: str,
    component: str,
    day: DayLedger,
    cents: int,
    quantity: Decimal | None,
    res: Resource | None = None,
) -> FocusRow:
    service = SERVICES[component]
    category = _category(team, component)
    usage = category == "Usage"
    money = format((Decimal(cents) / 100).quantize(_CENT), "f")
    shown_quantity = _number(quantity) if usage and quantity is not None else None
    unit = service.unit if shown_quantity is not None else None
    return FocusRow(
        BilledCost=money,
        BillingAccountId=ctx.billing_account,
        BillingAccountName=None,
        BillingCurrency=ctx.currency,
        BillingPeriodEnd=utc_stamp(ctx.month_end),
        BillingPeriodStart=utc_stamp(ctx.month_start),
        ChargeCategory=category,
        ChargeClass=None,
        ChargeDescription=_description(service, team, res),
        ChargeFrequency="Usage-Based",
        ChargePeriodEnd=utc_stamp(day.end),
        ChargePeriodStart=utc_stamp(day.start),
        ConsumedQuantity=shown_quantity,
        ConsumedUnit=unit,
        ContractedCost=money,
        EffectiveCost=money,
        InvoiceIssuerName=ctx.provider,
        ListCost=money,
        PricingQuantity=shown_quantity,
        PricingUnit=unit,
        ProviderName=ctx.provider,
        PublisherName=ctx.provider,
        ResourceId=res.id if res else None,
        ResourceName=res.name if res else None,
        ResourceType=res.type if res else None,
        ServiceCategory=service.category,
        ServiceName=service.name,
        ServiceSubcategory=service.subcategory,
        SubAccountId=team,
        SubAccountName=team,
        Tags=json.dumps({"team": team}, sort_keys=True),
        x_ChargePeriodLocalDate=day.start.date().isoformat(),
        x_Component=component,
        x_QuotaBasis=ctx.quota_basis,
        x_Reserved="true" if team in (IDLE, OTHER, UNALLOCATED) else "false",
    )

"""A FOCUS cost export's columns and rows: which columns a file must have, and what one row bills.

FOCUS (FinOps Open Cost and Usage Specification, 1.0 and later) names the columns the same in
every provider's export; the ones read here (docs/sources/focus-exports.md):

- `BilledCost` (decimal, in `BillingCurrency`), `BillingCurrency` (ISO 4217);
- `ChargePeriodStart`/`ChargePeriodEnd` (ISO 8601 date-times in UTC, [start, end));
- `ChargeCategory` (Usage, Purchase, Tax, Credit, Adjustment), `ChargeClass` (Correction);
- `ResourceId`, `ServiceCategory` (Compute, AI and Machine Learning, ...), `ServiceName`;
- `ProviderName` (1.0 to 1.2) or `ServiceProviderName` (1.3, which deprecates the first);
- `Tags` (a JSON object of key to value), `SubAccountId`, `InvoiceId` (1.2+),
  `BillingPeriodEnd`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation

from exporter.sources.bills.lines import BillKind
from exporter.sources.checks import (
    MAX_COST,
    MAX_LABEL,
    MISSING_FIELD,
    NON_FINITE,
    OUT_OF_RANGE,
    WRONG_TYPE,
    BadRecord,
)

__all__ = [
    "COMPUTE",
    "LLM_SERVICES",
    "MANDATORY",
    "Columns",
    "Row",
    "billed",
    "parse_instant",
    "selected",
]

# What a file must have for its rows to be read at all.
MANDATORY = (
    "BilledCost",
    "BillingCurrency",
    "ChargeCategory",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ResourceId",
    "ServiceCategory",
)
_PROVIDER = ("ServiceProviderName", "ProviderName")  # 1.3's name first
_OPTIONAL = (
    "BillingPeriodEnd",
    "ChargeClass",
    "InvoiceId",
    "ServiceName",
    "SubAccountId",
    "Tags",
)
COMPUTE = "Compute"
LLM_SERVICES = frozenset({"AI and Machine Learning"})
# Charges that may be negative: credits, and corrections of an earlier period.
_NEGATIVE = frozenset({"Credit", "Adjustment"})


@dataclass(frozen=True)
class Columns:
    """Where each read column sits in a file's rows (-1: the file lacks an optional one)."""

    at: dict[str, int]
    width: int

    @classmethod
    def of(cls, header: Sequence[str], tagged: bool) -> Columns:
        """The columns of a header; ValueError naming every mandatory one it lacks."""
        names = [name.strip() for name in header]
        index = {name: i for i, name in reversed(list(enumerate(names)))}
        needed = [*MANDATORY, *(["Tags"] if tagged else [])]
        missing = [name for name in needed if name not in index]
        provider = next((name for name in _PROVIDER if name in index), None)
        if provider is None:
            missing.append("ProviderName (or ServiceProviderName)")
        if missing:
            raise ValueError(f"missing mandatory FOCUS column(s): {', '.join(missing)}")
        at = {name: index.get(name, -1) for name in (*MANDATORY, *_OPTIONAL)}
        at["Provider"] = index[provider] if provider else -1
        return cls(at, len(names))

    def get(self, row: Sequence[str], name: str) -> str:
        """A row's value of a column, "" when the file has no such column."""
        i = self.at[name]
        return row[i].strip() if i >= 0 else ""


@dataclass(frozen=True)
class Row:
    """What one row of a FOCUS export bills, checked."""

    kind: BillKind
    day: date
    end: datetime
    billing_end: datetime | None
    amount: Decimal
    currency: str
    provider: str
    resource_id: str | None
    scope: str | None
    invoice: str | None
    description: str


def parse_instant(text: str, what: str) -> datetime:
    """An ISO 8601 date-time (FOCUS: UTC), with or without its `Z` or a `T`."""
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        reason = MISSING_FIELD if not text else WRONG_TYPE
        raise BadRecord(reason, f"{what} {text[:40]!r} is not an ISO 8601 date-time") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def selected(
    columns: Columns, row: Sequence[str], cluster_tag: tuple[str, str] | None
) -> BillKind | None:
    """Whether a row bills the cluster's nodes, the LLM providers, or neither (None).

    With a cluster tag, the cluster's rows are those tagged with it; without one, every
    compute row naming its resource, for the reconciliation to match by the nodes' ids.
    """
    service = columns.get(row, "ServiceCategory")
    if service in LLM_SERVICES:
        return BillKind.LLM
    if cluster_tag is None:
        if service == COMPUTE and columns.get(row, "ResourceId"):
            return BillKind.CLUSTER
        return None
    tags = columns.get(row, "Tags")
    key, value = cluster_tag
    if key not in tags:  # most rows: no JSON parsed
        return None
    try:
        parsed = json.loads(tags)
    except json.JSONDecodeError:
        raise BadRecord(WRONG_TYPE, "Tags is not a JSON object") from None
    if not isinstance(parsed, dict):
        raise BadRecord(WRONG_TYPE, "Tags is not a JSON object")
    return BillKind.CLUSTER if parsed.get(key) == value else None


def billed(columns: Columns, row: Sequence[str], kind: BillKind, day: date, end: datetime) -> Row:
    """One selected row's charge, each field checked."""
    if len(row) != columns.width:
        raise BadRecord(MISSING_FIELD, f"{len(row)} fields, the header has {columns.width}")
    category = columns.get(row, "ChargeCategory")
    correction = columns.get(row, "ChargeClass") == "Correction"
    cost = _cost(columns.get(row, "BilledCost"), negative=category in _NEGATIVE or correction)
    billing_end = columns.get(row, "BillingPeriodEnd")
    return Row(
        kind=kind,
        day=day,
        end=end,
        billing_end=parse_instant(billing_end, "BillingPeriodEnd") if billing_end else None,
        amount=cost,
        currency=_currency(columns.get(row, "BillingCurrency")),
        provider=_text(columns.get(row, "Provider"), "ProviderName").lower(),
        resource_id=_text(columns.get(row, "ResourceId"), "ResourceId") or None,
        scope=_text(columns.get(row, "SubAccountId"), "SubAccountId") or None,
        invoice=_text(columns.get(row, "InvoiceId"), "InvoiceId") or None,
        description=_text(
            category + (f" {columns.get(row, 'ServiceName')}" if kind is BillKind.LLM else ""),
            "ChargeCategory",
        ).strip(),
    )


def _cost(text: str, *, negative: bool) -> Decimal:
    if not text:
        raise BadRecord(MISSING_FIELD, "BilledCost is empty")
    try:
        cost = Decimal(text)
    except InvalidOperation:
        raise BadRecord(WRONG_TYPE, f"BilledCost {text[:40]!r} is not a number") from None
    if not cost.is_finite():
        raise BadRecord(NON_FINITE, "BilledCost is not finite")
    if abs(cost) >= MAX_COST or (cost < 0 and not negative):
        raise BadRecord(OUT_OF_RANGE, f"BilledCost is {cost}, expected 0..{MAX_COST:g}")
    return cost


def _currency(code: str) -> str:
    """An ISO 4217 code's shape; whether it converts is the bill's to say (settings)."""
    if not code:
        raise BadRecord(MISSING_FIELD, "BillingCurrency is empty")
    if len(code) != 3 or not code.isascii() or not code.isalpha():
        raise BadRecord(WRONG_TYPE, f"BillingCurrency {code[:12]!r} is not an ISO 4217 code")
    return code


def _text(value: str, what: str) -> str:
    if len(value) > MAX_LABEL:
        raise BadRecord(OUT_OF_RANGE, f"{what} is {len(value)} characters, at most {MAX_LABEL}")
    return value

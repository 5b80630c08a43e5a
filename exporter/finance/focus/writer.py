"""The FOCUS 1.2 CSV export of a closed month: its columns, in order, and the writer."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from exporter.finance.focus.rows import FocusRow

__all__ = ["COLUMNS", "FOCUS_VERSION", "format_focus"]

FOCUS_VERSION = "1.2"
# FOCUS columns first, alphabetically, then the custom `x_` columns (FOCUS 1.2 Column Handling).
COLUMNS: tuple[str, ...] = (
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargeFrequency",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ConsumedQuantity",
    "ConsumedUnit",
    "ContractedCost",
    "EffectiveCost",
    "InvoiceIssuerName",
    "ListCost",
    "PricingQuantity",
    "PricingUnit",
    "ProviderName",
    "PublisherName",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "ServiceCategory",
    "ServiceName",
    "ServiceSubcategory",
    "SubAccountId",
    "SubAccountName",
    "Tags",
    "x_ChargePeriodLocalDate",
    "x_Component",
    "x_QuotaBasis",
    "x_Reserved",
)


def format_focus(rows: Sequence[FocusRow]) -> str:
    """The rows as CSV: a header, then one line per row; a null is an empty field."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(["" if row[c] is None else row[c] for c in COLUMNS])
    return out.getvalue()

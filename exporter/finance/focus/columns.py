"""The FOCUS 1.2 export's row type: its fields are the columns, named and ordered as printed."""

from __future__ import annotations

import msgspec

__all__ = ["COLUMNS", "NAME_COLUMNS", "OWN_COLUMNS", "FocusRow", "cells"]


class FocusRow(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One FOCUS row; each field is a column of the same name, and None is a null.

    Fields are declared in the order the CSV prints them: the FOCUS columns alphabetically,
    then the custom `x_` columns (FOCUS 1.2 Column Handling: custom columns come after all
    FOCUS columns). No field has a default and every one is keyword-only, so a missing or
    misspelt column fails the type check rather than a run. A struct, not a frozen dataclass:
    a month makes one per team, component, resource and day, and a struct is built in C.
    `str` marks a column the export always fills; `str | None` one it may leave null.
    """

    BilledCost: str
    BillingAccountId: str
    BillingAccountName: str | None
    BillingCurrency: str
    BillingPeriodEnd: str
    BillingPeriodStart: str
    ChargeCategory: str
    ChargeClass: str | None
    ChargeDescription: str
    ChargeFrequency: str
    ChargePeriodEnd: str
    ChargePeriodStart: str
    ConsumedQuantity: str | None
    ConsumedUnit: str | None
    ContractedCost: str
    EffectiveCost: str
    InvoiceId: str | None
    InvoiceIssuerName: str
    ListCost: str
    PricingQuantity: str | None
    PricingUnit: str | None
    ProviderName: str
    PublisherName: str
    ResourceId: str | None
    ResourceName: str | None
    ResourceType: str | None
    ServiceCategory: str
    ServiceName: str
    ServiceSubcategory: str
    SubAccountId: str
    SubAccountName: str
    Tags: str
    x_ChargePeriodLocalDate: str
    x_Cluster: str
    x_Component: str
    x_MonthToDate: str
    x_QuotaBasis: str | None
    x_Reserved: str


COLUMNS: tuple[str, ...] = tuple(f.name for f in msgspec.structs.fields(FocusRow))

# Columns whose text comes from labels, upstreams or the config (team, model, provider and
# cluster names): the writer keeps each from reading as a spreadsheet formula.
NAME_COLUMNS = frozenset(
    {
        "BillingAccountId",
        "BillingAccountName",
        "ChargeDescription",
        "InvoiceId",
        "InvoiceIssuerName",
        "ProviderName",
        "PublisherName",
        "ResourceId",
        "ResourceName",
        "SubAccountId",
        "SubAccountName",
        "Tags",
        "x_Cluster",
    }
)
# Columns we write ourselves: numbers and dates we format (a cost of -12.50 stays a number),
# and values from FOCUS's or our own fixed vocabulary. With NAME_COLUMNS, every column.
OWN_COLUMNS = frozenset(COLUMNS) - NAME_COLUMNS


def cells(row: FocusRow) -> tuple[str | None, ...]:
    """The row's values in column order."""
    return msgspec.structs.astuple(row)

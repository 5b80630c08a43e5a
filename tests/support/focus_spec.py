"""FOCUS 1.2 column rules, written from the specification's text (FOCUS_Spec tag v1.2).

Each rule names the section of specification/columns/*.md or specification/attributes/*.md it
comes from, so a reader can check it against the spec rather than against our export.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

__all__ = ["MANDATORY", "violations"]

# Columns whose Feature level is Mandatory (each column's "Content Constraints" table).
MANDATORY = (
    "BilledCost",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargeDescription",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ContractedCost",
    "EffectiveCost",
    "InvoiceIssuerName",
    "ListCost",
    "PricingQuantity",
    "PricingUnit",
    "ProviderName",
    "PublisherName",
    "ServiceCategory",
    "ServiceName",
)
# "Allows nulls: False" in the column's Content Constraints.
NOT_NULL = (
    "BilledCost",
    "BillingAccountId",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeFrequency",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ContractedCost",
    "EffectiveCost",
    "InvoiceIssuerName",
    "ListCost",
    "ProviderName",
    "PublisherName",
    "ServiceCategory",
    "ServiceName",
    "ServiceSubcategory",
)
DECIMALS = (
    "BilledCost",
    "ConsumedQuantity",
    "ContractedCost",
    "EffectiveCost",
    "ListCost",
    "PricingQuantity",
)
DATETIMES = ("BillingPeriodEnd", "BillingPeriodStart", "ChargePeriodEnd", "ChargePeriodStart")
# columns/chargecategory.md "Allowed values".
CHARGE_CATEGORIES = {"Usage", "Purchase", "Tax", "Credit", "Adjustment"}
# columns/chargeclass.md: "ChargeClass MUST be 'Correction' when ChargeClass is not null."
CHARGE_CLASSES = {None, "Correction"}
# columns/chargefrequency.md "Allowed values".
CHARGE_FREQUENCIES = {"One-Time", "Recurring", "Usage-Based"}
# columns/servicesubcategory.md "Allowed values" (the ones a cluster can need), with parents.
SUBCATEGORIES = {
    "Containers": "Compute",
    "Other (Compute)": "Compute",
    "Virtual Machines": "Compute",
    "Block Storage": "Storage",
    "Other (Storage)": "Storage",
    "Network Connectivity": "Networking",
    "Other (Networking)": "Networking",
    "Generative AI": "AI and Machine Learning",
    "Machine Learning": "AI and Machine Learning",
    "Other (AI and Machine Learning)": "AI and Machine Learning",
    # The invoice true-up (an Adjustment): neither the cluster's compute nor an AI service.
    "Other (Other)": "Other",
}
# columns/servicecategory.md "Allowed values".
SERVICE_CATEGORIES = {
    "AI and Machine Learning",
    "Analytics",
    "Business Applications",
    "Compute",
    "Databases",
    "Developer Tools",
    "Multicloud",
    "Identity",
    "Integration",
    "Internet of Things",
    "Management and Governance",
    "Media",
    "Migration",
    "Mobile",
    "Networking",
    "Security",
    "Storage",
    "Web",
    "Other",
}
# attributes/datetime_format.md: extended ISO 8601 with the UTC 'Z' ('YYYY-MM-DDTHH:mm:ssZ').
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
# attributes/numeric_format.md: an integer, a decimal or E notation; no sign for a positive
# value, no commas, no units, a sign in the exponent only when it is negative.
_NUMERIC = re.compile(r"-?\d+(\.\d+)?(E-?\d+)?")
# attributes/currency_format.md: ISO 4217 three-letter code.
_CURRENCY = re.compile(r"[A-Z]{3}")
# attributes/column_handling.md: custom columns are prefixed `x_`; FOCUS columns are Pascal case.
_CUSTOM = re.compile(r"x_[A-Za-z0-9]+")
_PASCAL = re.compile(r"[A-Z][A-Za-z0-9]*")

Row = Mapping[str, str | None]


def violations(header: list[str], row: Row) -> list[str]:
    """Every FOCUS 1.2 rule the row breaks (empty when it conforms)."""
    out = [f"missing mandatory column {c}" for c in MANDATORY if c not in header]
    out += _columns(header)
    out += [f"{c} is null" for c in NOT_NULL if c in header and row.get(c) is None]
    out += [
        f"{c}={row[c]!r} is not numeric"
        for c in DECIMALS
        if row.get(c) is not None and not _NUMERIC.fullmatch(str(row[c]))
    ]
    out += [
        f"{c}={row[c]!r} is not YYYY-MM-DDTHH:mm:ssZ"
        for c in DATETIMES
        if row.get(c) is not None and not _DATETIME.fullmatch(str(row[c]))
    ]
    out += _values(row) + _quantities(row) + _costs(row) + _tags(row) + _resources(row)
    return out


def _resources(row: Row) -> list[str]:
    out = []
    rid, name, kind = row.get("ResourceId"), row.get("ResourceName"), row.get("ResourceType")
    # resourcename.md: "MUST be null when ResourceId is null".
    if rid is None and name is not None:
        out.append("ResourceName without ResourceId")
    # resourcetype.md: "MUST be null when ResourceId is null" and "MUST NOT be null when
    # ResourceId is not null".
    if (rid is None) != (kind is None):
        out.append("ResourceType and ResourceId disagree on null")
    # resourcename.md: "MUST NOT duplicate ResourceId when the resource is not provisioned
    # interactively or only has a system-generated ResourceId" (ours are derived, never typed).
    if rid is not None and name == rid:
        out.append("ResourceName duplicates ResourceId")
    return out


def _columns(header: list[str]) -> list[str]:
    custom = [c for c in header if c.startswith("x_")]
    out = [f"bad custom column {c}" for c in custom if not _CUSTOM.fullmatch(c)]
    out += [f"bad column id {c}" for c in header if c not in custom and not _PASCAL.fullmatch(c)]
    # column_handling.md: "Custom columns SHOULD be listed after all FOCUS columns".
    if custom and header[-len(custom) :] != custom:
        out.append("custom columns are mixed in with FOCUS columns")
    return out


def _values(row: Row) -> list[str]:
    out = []
    if row.get("ChargeCategory") not in CHARGE_CATEGORIES:
        out.append(f"ChargeCategory {row.get('ChargeCategory')!r}")
    if row.get("ChargeClass") not in CHARGE_CLASSES:
        out.append(f"ChargeClass {row.get('ChargeClass')!r}")
    if row.get("ChargeFrequency") not in CHARGE_FREQUENCIES:
        out.append(f"ChargeFrequency {row.get('ChargeFrequency')!r}")
    # chargefrequency.md: "MUST NOT be 'Usage-Based' when ChargeCategory is 'Purchase'".
    if row.get("ChargeCategory") == "Purchase" and row.get("ChargeFrequency") == "Usage-Based":
        out.append("a Purchase is Usage-Based")
    category = row.get("ServiceCategory")
    if category not in SERVICE_CATEGORIES:
        out.append(f"ServiceCategory {category!r}")
    sub = row.get("ServiceSubcategory")
    if sub is not None and SUBCATEGORIES.get(sub) != category:
        out.append(f"ServiceSubcategory {sub!r} under {category!r}")
    if not _CURRENCY.fullmatch(str(row.get("BillingCurrency"))):
        out.append(f"BillingCurrency {row.get('BillingCurrency')!r}")
    return out


def _quantities(row: Row) -> list[str]:
    out = []
    usage = row.get("ChargeCategory") == "Usage" and row.get("ChargeClass") is None
    # consumedquantity.md: null when ChargeCategory is not "Usage"; not null for Usage rows
    # that are not corrections.
    if usage and row.get("ConsumedQuantity") is None:
        out.append("a Usage row without ConsumedQuantity")
    if row.get("ChargeCategory") != "Usage" and row.get("ConsumedQuantity") is not None:
        out.append("ConsumedQuantity on a row that is not Usage")
    # pricingquantity.md: not null when ChargeCategory is "Usage" or "Purchase".
    if usage and row.get("PricingQuantity") is None:
        out.append("a Usage row without PricingQuantity")
    # consumedunit.md / pricingunit.md: the unit is null exactly when the quantity is.
    for quantity, unit in (
        ("ConsumedQuantity", "ConsumedUnit"),
        ("PricingQuantity", "PricingUnit"),
    ):
        if (row.get(quantity) is None) != (row.get(unit) is None):
            out.append(f"{unit} and {quantity} disagree on null")
    return out


def _costs(row: Row) -> list[str]:
    # listcost.md / contractedcost.md / effectivecost.md: without unit prices, a charge
    # unrelated to other charges MUST match BilledCost (we publish no unit prices).
    return [
        f"{c} differs from BilledCost"
        for c in ("ListCost", "ContractedCost", "EffectiveCost")
        if row.get(c) is not None and row.get(c) != row.get("BilledCost")
    ]


def _tags(row: Row) -> list[str]:
    # attributes/key_value_format.md: a JSON object whose values are scalars.
    text = row.get("Tags")
    if text is None:
        return []
    try:
        tags = json.loads(text)
    except ValueError:
        return ["Tags is not JSON"]
    if not isinstance(tags, dict):
        return ["Tags is not a JSON object"]
    return [f"tag {k} is not a scalar" for k, v in tags.items() if isinstance(v, dict | list)]

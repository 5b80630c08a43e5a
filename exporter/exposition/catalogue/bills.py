"""Bill families: what each bill source billed against what was recorded, and the drift."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

# `period` is `day` (the last closed day the bill holds whole) or `month` (every such day of
# the month); `kind` is `llm` (a provider's bill against the gateway) or `cluster` (a cloud
# export against OpenCost).
_LABELS = ("source", "provider", "scope", "kind", "period")
_BILL = ("source", "provider", "scope", "kind")

BILL_BILLED = family(
    "bill_billed",
    G,
    "What the bill charged over the period's billed days, converted at the stated rate.",
    _LABELS,
    "currency",
    "bills",
)

BILL_RECORDED = family(
    "bill_recorded",
    G,
    "What the gateway (llm) or OpenCost (cluster) recorded over the same billed days.",
    _LABELS,
    "currency",
    "bills",
)

BILL_DIFFERENCE = family(
    "bill_difference",
    G,
    "Billed minus recorded over the period's billed days: positive when the bill is higher.",
    _LABELS,
    "currency",
    "bills",
)

BILL_RATIO = family(
    "bill_ratio",
    G,
    "Billed over recorded over the period's billed days; absent when nothing was recorded.",
    _LABELS,
    "ratio",
    "bills",
)

BILL_BILLED_DATES = family(
    "bill_billed_dates",
    G,
    "UTC dates of the calendar month the bill holds whole and that have ended (a count).",
    _BILL,
    "days",
    "bills",
)

BILL_LAST_DAY_TIMESTAMP_SECONDS = family(
    "bill_last_day_timestamp_seconds",
    G,
    "Unix time of the start (UTC) of the last closed day the bill holds whole.",
    _BILL,
    "seconds",
    "bills",
)

BILL_CURRENCY_RATE = family(
    "bill_currency_rate",
    G,
    "Units of the exporter's currency per unit of the bill's currency, as converted.",
    (*_BILL, "currency"),
    "ratio",
    "bills",
)

LLM_SPEND_WITHOUT_PROVIDER_MONTH_TO_DATE = family(
    "llm_spend_without_provider_month_to_date",
    G,
    "Gateway spend this month on models no rule gave a provider, so no bill can claim it.",
    (),
    "currency",
    "litellm",
)

"""Bill series: each bill source's billed, recorded, difference and ratio, day and month."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, time

from exporter.exposition.catalogue.bills import (
    BILL_BILLED,
    BILL_BILLED_DATES,
    BILL_CURRENCY_RATE,
    BILL_DIFFERENCE,
    BILL_LAST_DAY_TIMESTAMP_SECONDS,
    BILL_RATIO,
    BILL_RECORDED,
    LLM_SPEND_WITHOUT_PROVIDER_MONTH_TO_DATE,
)
from exporter.exposition.samples import Sample
from exporter.ledger.reconcile import BillFigures, Reconciliation
from exporter.ledger.reconcile.figures import ratio
from exporter.ledger.result import Chargeback

__all__ = ["bill_samples", "series"]


def series(chargeback: Chargeback) -> list[Sample]:
    """The reconciliation's figures; none without bills."""
    found = chargeback.reconciliation
    return list(bill_samples(found)) if found is not None else []


def bill_samples(reconciliation: Reconciliation) -> Iterable[Sample]:
    """Every bill's figures for its last closed day and its month, and what no bill claims."""
    for bill in reconciliation.bills:
        yield from _bill(bill)
    yield Sample.of(LLM_SPEND_WITHOUT_PROVIDER_MONTH_TO_DATE, reconciliation.unknown_provider)


def _bill(bill: BillFigures) -> Iterable[Sample]:
    who = {"source": bill.source, "provider": bill.provider, "scope": bill.scope}
    labels = {**who, "kind": bill.kind.value}
    yield Sample.of(BILL_BILLED_DATES, float(len(bill.days_billed)), **labels)
    yield Sample.of(BILL_CURRENCY_RATE, bill.rate, **labels, currency=bill.currency)
    periods = [("month", bill.billed, bill.recorded)]
    last = bill.last_day
    if last is not None:
        periods.append(("day", last.billed, last.recorded))
        start = datetime.combine(last.day, time(), UTC)
        yield Sample.of(BILL_LAST_DAY_TIMESTAMP_SECONDS, start.timestamp(), **labels)
    if not bill.days_billed:
        return
    for period, billed, recorded in periods:
        yield Sample.of(BILL_BILLED, billed, **labels, period=period)
        yield Sample.of(BILL_RECORDED, recorded, **labels, period=period)
        yield Sample.of(BILL_DIFFERENCE, billed - recorded, **labels, period=period)
        share = ratio(billed, recorded)
        if share is not None:
            yield Sample.of(BILL_RATIO, share, **labels, period=period)

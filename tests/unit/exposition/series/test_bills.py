"""Bill series: month and last closed day per bill, no ratio over nothing, none without bills."""

from __future__ import annotations

from datetime import date

from exporter.exposition.series.bills import bill_samples
from exporter.ledger.reconcile import BillFigures, DayFigures, Reconciliation
from exporter.sources.bills.lines import BillKind

D1, D2 = date(2026, 3, 1), date(2026, 3, 2)


def _bill(days: tuple[DayFigures, ...]) -> BillFigures:
    return BillFigures(
        source="openai",
        provider="openai",
        scope="all",
        kind=BillKind.LLM,
        currency="USD",
        rate=0.9,
        billed=sum(d.billed for d in days),
        recorded=sum(d.recorded for d in days),
        days=days,
        unmatched=(),
        days_billed=tuple(d.day for d in days),
    )


def _values(found: Reconciliation) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.family.exposed_name, s.labels): s.value for s in bill_samples(found)}


def test_a_bill_shows_its_month_and_its_last_closed_day() -> None:
    days = (DayFigures(D1, 10.0, 8.0), DayFigures(D2, 3.0, 0.0))
    values = _values(Reconciliation(currency="EUR", bills=(_bill(days),), unknown_provider=2.5))
    who = (("source", "openai"), ("provider", "openai"), ("scope", "all"), ("kind", "llm"))
    month, day = (*who, ("period", "month")), (*who, ("period", "day"))
    assert values[("chargeback_bill_billed", month)] == 13.0
    assert values[("chargeback_bill_recorded", month)] == 8.0
    assert values[("chargeback_bill_difference", month)] == 5.0
    assert values[("chargeback_bill_ratio", month)] == 13.0 / 8.0
    assert values[("chargeback_bill_difference", day)] == 3.0
    assert ("chargeback_bill_ratio", day) not in values  # nothing recorded: no ratio
    assert values[("chargeback_bill_billed_dates", who)] == 2.0
    assert values[("chargeback_bill_last_day_timestamp_seconds", who)] == 1772409600.0
    assert values[("chargeback_bill_currency_rate", (*who, ("currency", "USD")))] == 0.9
    assert values[("chargeback_llm_spend_without_provider_month_to_date", ())] == 2.5


def test_a_bill_with_no_day_billed_yet_shows_no_figures() -> None:
    values = _values(Reconciliation(currency="EUR", bills=(_bill(()),)))
    assert {name for name, _ in values} == {
        "chargeback_bill_billed_dates",
        "chargeback_bill_currency_rate",
        "chargeback_llm_spend_without_provider_month_to_date",
    }

"""Bills against records: by closed billed day, model keys, scopes, currencies, the cluster."""

from __future__ import annotations

from datetime import date

import pytest

from exporter.ledger.reconcile import Recorded, reconcile
from exporter.ledger.reconcile.matching import CLUSTER_LINE
from exporter.sources.bills.lines import BillKind, BillSnapshot
from tests.unit.ledger.reconcile.builders import bills_config, cluster_line, llm_line, snapshot

D1, D2, D3 = date(2026, 3, 1), date(2026, 3, 2), date(2026, 3, 3)
MONTH = [date(2026, 3, d) for d in range(1, 32)]
OPENAI = {"type": "openai", "admin_key_env": "OPENAI_ADMIN_KEY"}
ANTHROPIC = {"type": "anthropic", "admin_key_env": "ANTHROPIC_ADMIN_KEY", "true_up": True}


def _openai_bill() -> dict[str, BillSnapshot]:
    lines = [
        llm_line("openai", D1, "gpt-4o-2024-08-06, input", 7.0),
        llm_line("openai", D1, "gpt-4o-2024-08-06, output", 5.0),
        llm_line("openai", D2, "gpt-4o-mini", 1.0),
        llm_line("openai", D3, "gpt-4o", 99.0),  # a day not billed whole yet
    ]
    return {"openai": snapshot("openai", BillKind.LLM, reversed(lines), [D1, D2])}


def test_each_billed_day_holds_the_bill_against_the_gateway() -> None:
    recorded = Recorded(
        llm={
            ("openai", "gpt-4o", D1): 10.0,
            ("openai", "gpt-4o-mini", D2): 1.0,
            ("openai", "gpt-4o", D3): 50.0,
            ("anthropic", "claude-sonnet-4", D1): 3.0,
        }
    )
    found = reconcile(
        bills_config({"openai": OPENAI}), "EUR", _openai_bill(), recorded, MONTH, closed=False
    )
    (bill,) = found.bills
    assert (bill.source, bill.provider, bill.scope, bill.kind) == (
        "openai",
        "openai",
        "all",
        BillKind.LLM,
    )
    assert [(d.day, d.billed, d.recorded) for d in bill.days] == [(D1, 12.0, 10.0), (D2, 1.0, 1.0)]
    assert (bill.billed, bill.recorded, bill.difference) == (13.0, 11.0, 2.0)
    assert bill.ratio == pytest.approx(13 / 11)
    assert bill.days_billed == (D1, D2) and not bill.month_closed
    assert [(u.line, u.day, u.amount) for u in bill.unmatched] == [("gpt-4o", D1, 2.0)]


def test_a_day_the_gateway_missed_is_unmatched_and_a_day_not_ended_is_not_compared() -> None:
    recorded = Recorded(llm={("openai", "gpt-4o", D1): 12.0})
    found = reconcile(
        bills_config({"openai": OPENAI}), "EUR", _openai_bill(), recorded, [D1, D2], closed=False
    )
    assert [(u.line, u.day, u.billed, u.recorded) for u in found.bills[0].unmatched] == [
        ("gpt-4o-mini", D2, 1.0, 0.0)
    ]
    only_first = reconcile(
        bills_config({"openai": OPENAI}), "EUR", _openai_bill(), recorded, [D1], closed=False
    )
    assert only_first.bills[0].days_billed == (D1,) and only_first.bills[0].unmatched == ()


def test_a_bill_in_another_currency_converts_at_the_rate_and_states_it() -> None:
    lines = [
        llm_line(
            "anthropic",
            D1,
            "claude-sonnet-4-20250514",
            10.0,
            currency="USD",
            scope="wrkspc_a",
            invoice="INV-7",
        )
    ]
    bills = {"anthropic": snapshot("anthropic", BillKind.LLM, lines, MONTH)}
    config = bills_config({"anthropic": ANTHROPIC}, currency_rates={"USD": 0.9})
    found = reconcile(config, "EUR", bills, Recorded(), MONTH, closed=True)
    (bill,) = found.bills
    assert (bill.currency, bill.rate, bill.billed, bill.invoices) == ("USD", 0.9, 9.0, ("INV-7",))
    assert bill.true_up and bill.month_closed and len(bill.days) == 31


def test_a_line_without_a_rate_is_left_out_and_counted() -> None:
    lines = [
        llm_line("anthropic", D1, "claude-sonnet-4", 10.0, currency="JPY"),
        llm_line("anthropic", D1, "claude-sonnet-4", 2.0),
    ]
    bills = {"anthropic": snapshot("anthropic", BillKind.LLM, lines, [D1])}
    found = reconcile(
        bills_config({"anthropic": ANTHROPIC}), "EUR", bills, Recorded(), MONTH, closed=False
    )
    assert found.unconverted == 1 and found.bills[0].billed == 2.0


def test_scopes_keep_only_the_gateways_projects() -> None:
    lines = [
        llm_line("openai", D1, "gpt-4o", 4.0, scope="proj_gw"),
        llm_line("openai", D1, "gpt-4o", 40.0, scope="proj_other"),
    ]
    bills = {"openai": snapshot("openai", BillKind.LLM, lines, [D1])}
    config = bills_config({"openai": {**OPENAI, "scopes": ["proj_gw"]}})
    found = reconcile(config, "EUR", bills, Recorded(), MONTH, closed=False)
    assert (found.bills[0].scope, found.bills[0].billed) == ("proj_gw", 4.0)


def test_a_provider_that_billed_nothing_on_its_closed_days_still_shows_what_we_recorded() -> None:
    bills = {"openai": snapshot("openai", BillKind.LLM, [], [D1])}
    recorded = Recorded(llm={("openai", "gpt-4o", D1): 3.0})
    found = reconcile(bills_config({"openai": OPENAI}), "EUR", bills, recorded, MONTH, closed=False)
    assert (found.bills[0].billed, found.bills[0].recorded) == (0.0, 3.0)
    assert found.bills[0].ratio == 0.0


def test_the_cluster_bill_is_held_against_opencost_day_by_day() -> None:
    lines = [
        cluster_line("cur", D1, "i-0abc", 30.0),
        cluster_line("cur", D1, "i-0def", 20.0),
        cluster_line("cur", D2, "i-0abc", 30.0),
    ]
    bills = {"cur": snapshot("cur", BillKind.CLUSTER, lines, [D1, D2])}
    config = bills_config({"cur": {"type": "focus", "path": "/exports"}})
    found = reconcile(
        config, "EUR", bills, Recorded(cluster={D1: 48.0, D2: 30.0}), MONTH, closed=False
    )
    (bill,) = found.bills
    assert (bill.provider, bill.scope, bill.kind) == ("aws", "cluster", BillKind.CLUSTER)
    assert [(d.billed, d.recorded) for d in bill.days] == [(50.0, 48.0), (30.0, 30.0)]
    assert [(u.line, u.day, u.amount) for u in bill.unmatched] == [(CLUSTER_LINE, D1, 2.0)]
    blind = reconcile(config, "EUR", bills, Recorded(), MONTH, closed=False)
    assert blind.bills[0].days == () and blind.bills[0].unmatched == ()


def test_a_bill_source_no_longer_configured_is_not_reconciled() -> None:
    found = reconcile(bills_config({}), "EUR", _openai_bill(), Recorded(), MONTH, closed=False)
    assert found.bills == ()


def test_a_cluster_read_as_a_whole_month_is_compared_once_its_bill_holds_the_month() -> None:
    lines = [cluster_line("cur", day, "i-0abc", 10.0) for day in MONTH]
    bills = {"cur": snapshot("cur", BillKind.CLUSTER, lines, MONTH)}
    config = bills_config({"cur": {"type": "focus", "path": "/exports"}})
    recorded = Recorded(cluster_month=300.0)
    (bill,) = reconcile(config, "EUR", bills, recorded, MONTH, closed=True).bills
    assert (bill.billed, bill.recorded, bill.days, bill.month_closed) == (310.0, 300.0, (), True)
    assert [(u.line, u.day, u.amount) for u in bill.unmatched] == [(CLUSTER_LINE, None, 10.0)]
    (open_month,) = reconcile(config, "EUR", bills, recorded, MONTH, closed=False).bills
    assert (open_month.billed, open_month.recorded, open_month.days_billed) == (0.0, 0.0, ())


def test_without_the_gateways_days_an_llm_bill_is_not_compared_with_nothing() -> None:
    found = reconcile(
        bills_config({"openai": OPENAI}),
        "EUR",
        _openai_bill(),
        Recorded(llm=None),
        MONTH,
        closed=False,
    )
    (bill,) = found.bills
    assert (bill.billed, bill.recorded, bill.days, bill.unmatched) == (0.0, 0.0, (), ())

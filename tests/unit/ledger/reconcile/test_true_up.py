"""True-up: the difference in whole cents, spread by recorded share, never the month to date."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.ledger.attribution import UNALLOCATED
from exporter.ledger.reconcile import BillFigures, DayFigures, true_up
from exporter.ledger.reconcile.true_up import spread_cents
from exporter.sources.bills.lines import BillKind
from tests.support.properties import examples

TEAMS = st.text("abcdefgh", min_size=1, max_size=4)
SHARES = st.dictionaries(TEAMS, st.floats(0.0, 1e7, allow_nan=False), max_size=8)


def _figures(billed: float, recorded: float, *, true_up: bool, month_closed: bool) -> BillFigures:
    day = date(2026, 3, 31)
    return BillFigures(
        source="openai",
        provider="openai",
        scope="all",
        kind=BillKind.LLM,
        currency="EUR",
        rate=1.0,
        billed=billed,
        recorded=recorded,
        days=(DayFigures(day, billed, recorded),),
        unmatched=(),
        invoices=("INV-1",),
        true_up=true_up,
        month_closed=month_closed,
    )


@settings(max_examples=examples(300))
@given(total=st.integers(-(10**9), 10**9), shares=SHARES)
def test_the_parts_add_up_to_the_cent_and_each_is_within_a_cent_of_its_share(
    total: int, shares: dict[str, float]
) -> None:
    parts = spread_cents(total, shares)
    assert sum(parts.values()) == total
    whole = sum(Decimal(repr(w)) for w in shares.values() if w > 0)
    if whole == 0:
        assert parts == ({UNALLOCATED: total} if total else {})
        return
    for team, cents in parts.items():
        exact = Decimal(total) * Decimal(repr(shares[team])) / whole
        assert abs(Decimal(cents) - exact) < 1


def test_largest_remainder_goes_up_first_and_ties_go_to_the_first_name() -> None:
    assert spread_cents(100, {"b": 1.0, "a": 1.0, "c": 1.0}) == {"a": 34, "b": 33, "c": 33}
    assert spread_cents(-100, {"a": 2.0, "b": 1.0}) == {"a": -67, "b": -33}
    assert spread_cents(10, {"a": 0.0, "b": -1.0}) == {UNALLOCATED: 10}


def test_only_a_closed_month_billed_whole_and_configured_trues_up() -> None:
    shares = {"research": 3.0, "vision": 1.0}
    assert true_up(_figures(10.0, 6.0, true_up=True, month_closed=False), shares) is None
    assert true_up(_figures(10.0, 6.0, true_up=False, month_closed=True), shares) is None
    found = true_up(_figures(10.005, 6.0, true_up=True, month_closed=True), shares)
    assert found is not None
    assert (found.amount, dict(found.teams), found.invoices) == (
        4.01,
        {"research": 3.01, "vision": 1.0},
        ("INV-1",),
    )

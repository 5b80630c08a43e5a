"""The lending rule: borrowed quota apportioned to lenders, mismatches reported, month to date."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.ledger.costs.lending import (
    LendingMismatch,
    lend,
    lendable,
    lending_mismatches,
    month_borrowing,
)
from exporter.sources.kueue.records import QuotaRecord
from tests.unit.ledger.costs.quota_records import GPU, gpu_q


def test_borrowed_is_apportioned_by_lendable_quota() -> None:
    queues = [
        gpu_q("cq-a", 2, 5, borrowed=3),
        gpu_q("cq-b", 4, 1),  # lendable 3
        gpu_q("cq-c", 4, 0, lending_limit=1.0),  # lendable min(4, 1) = 1
        gpu_q("cq-d", 1, 1),  # nothing to lend
    ]
    assert [lendable(q) for q in queues] == [0.0, 3.0, 1.0, 0.0]
    lent = lend(queues)
    assert lent[("cq-b", "h100", GPU)] == pytest.approx(2.25)
    assert lent[("cq-c", "h100", GPU)] == pytest.approx(0.75)
    assert lent[("cq-a", "h100", GPU)] == 0.0 and lent[("cq-d", "h100", GPU)] == 0.0
    assert lending_mismatches(queues, lent) == []


def test_cohorts_flavors_and_resources_are_separate_pools() -> None:
    queues = [
        gpu_q("cq-a", 1, 2, borrowed=1),
        QuotaRecord("cq-b", "other", "h100", GPU, 4, usage=0),  # another cohort: lends nothing
        QuotaRecord("cq-c", "pool", "a100", GPU, 4, usage=0),  # another flavor
        gpu_q("cq-d", 2, 0),
        QuotaRecord("cq-e", "", "h100", GPU, 9, usage=0),  # no cohort: never lends
    ]
    lent = lend(queues)
    assert lent == {
        ("cq-a", "h100", GPU): 0.0,
        ("cq-b", "h100", GPU): 0.0,
        ("cq-c", "a100", GPU): 0.0,
        ("cq-d", "h100", GPU): 1.0,
    }


def test_borrowing_from_cohort_held_quota_is_reported_not_invented() -> None:
    queues = [gpu_q("cq-a", 1, 4, borrowed=3), gpu_q("cq-b", 2, 1)]
    lent = lend(queues)
    assert lent[("cq-b", "h100", GPU)] == 1.0  # never more than its unused quota
    assert lending_mismatches(queues, lent) == [LendingMismatch("pool", "h100", GPU, 3.0, 1.0)]


def test_month_borrowing_lent_sums_to_borrowed_when_enough_is_lendable() -> None:
    borrowed, lent = month_borrowing(
        {"a": 2, "b": 1, "c": 1}, {"a": 1800, "b": 432, "c": 252}, {"c": 0.5}, 720
    )
    # a used 1800 of its 1440: borrows 360. b could lend 288, c min(468, 360) = 360.
    assert borrowed == {"a": 360.0, "b": 0.0, "c": 0.0}
    assert lent == pytest.approx({"a": 0.0, "b": 360 * 288 / 648, "c": 360 * 360 / 648})
    assert sum(lent.values()) == pytest.approx(sum(borrowed.values()))


def test_month_borrowing_never_lends_more_than_is_spare() -> None:
    borrowed, lent = month_borrowing({"a": 1, "b": 1}, {"a": 30, "b": 5, "z": 10}, {}, 10)
    assert borrowed == {"a": 20.0, "b": 0.0, "z": 10.0}
    assert lent == {"a": 0.0, "b": 5.0, "z": 0.0}


@given(
    nominal=st.dictionaries(st.sampled_from("abcd"), st.floats(0, 16), max_size=4),
    used=st.dictionaries(st.sampled_from("abcd"), st.floats(0, 20_000), max_size=4),
)
def test_month_borrowing_properties(nominal: dict[str, float], used: dict[str, float]) -> None:
    borrowed, lent = month_borrowing(nominal, used, {}, 720)
    total_b, total_l = sum(borrowed.values()), sum(lent.values())
    assert total_l <= total_b + 1e-6
    spare = sum(max(0.0, nominal.get(t, 0) * 720 - used.get(t, 0)) for t in borrowed)
    if spare >= total_b:
        assert total_l == pytest.approx(total_b, rel=1e-9, abs=1e-9)
    assert all(not (borrowed[t] > 0 and lent[t] > 0) for t in borrowed)

"""Each ClusterQueue's ceiling: nominal plus what it may borrow within its cohort, priced."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.ledger.costs.quota import QueueQuota
from exporter.ledger.queues.ceiling import queue_ceilings
from tests.support.properties import examples

GPU = "nvidia.com/gpu"
INF = math.inf


def q(name: str, cohort: str, nominal: float, borrow: float = INF, lend: float = INF) -> QueueQuota:
    return QueueQuota(name, name, cohort, "h100", GPU, nominal, 0, 0, 0, borrow, lend)


def test_a_queue_in_no_cohort_cannot_borrow() -> None:
    (alone,) = queue_ceilings([q("a", "", 2)], {"h100": 1.0}, 10.0)
    assert (alone.ceiling_gpus, alone.ceiling_cost, alone.nominal_cost) == (2, 20.0, 20.0)


def test_an_unset_borrowing_limit_is_bounded_by_what_the_cohort_lends() -> None:
    a, b, c = queue_ceilings(
        [q("a", "pool", 2), q("b", "pool", 4, lend=1), q("c", "pool", 3, borrow=0)],
        {"h100": 1.0},
        1.0,
    )
    assert a.ceiling_gpus == 2 + 1 + 3
    assert b.ceiling_gpus == 4 + 2 + 3
    assert c.ceiling_gpus == 3


def test_cpu_rows_and_unpriced_flavors_are_left_out_and_said() -> None:
    rows = [
        q("a", "", 2),
        QueueQuota("a", "a", "", "h100", "cpu", 64, 0, 0, 0, INF, INF),
        QueueQuota("a", "a", "", "mig", GPU, 7, 0, 0, 0, INF, INF),
    ]
    (a,) = queue_ceilings(rows, {"h100": 1.0}, 1.0)
    assert (a.nominal_gpus, a.unpriced_flavors) == (2, ("mig",))


queues = st.lists(
    st.builds(
        q,
        st.sampled_from(["a", "b", "c", "d"]),
        st.sampled_from(["", "pool", "other"]),
        st.integers(0, 16).map(float),
        st.one_of(st.just(INF), st.integers(0, 16).map(float)),
        st.one_of(st.just(INF), st.integers(0, 16).map(float)),
    ),
    max_size=6,
    unique_by=lambda r: r.cluster_queue,
)


@settings(max_examples=examples(200))
@given(queues, st.floats(0.01, 10), st.sampled_from([672.0, 720.0, 743.0, 744.0, 745.0]))
def test_a_ceiling_lies_between_nominal_and_nominal_plus_its_limit(
    rows: list[QueueQuota], price: float, hours: float
) -> None:
    by_name = {r.cluster_queue: r for r in rows}
    for c in queue_ceilings(rows, {"h100": price}, hours):
        r = by_name[c.cluster_queue]
        assert r.nominal <= c.ceiling_gpus <= r.nominal + r.borrowing_limit
        assert c.nominal_cost == pytest.approx(r.nominal * price * hours)
        assert c.ceiling_cost == pytest.approx(c.ceiling_gpus * price * hours)
        assert math.isfinite(c.ceiling_cost)

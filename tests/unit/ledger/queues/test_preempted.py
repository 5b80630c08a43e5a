"""Preempted work: priced per flavor, summed by team, queue and reason, money conserved."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.ledger.queues.preempted import Eviction, preempted_work
from tests.support.properties import examples

evictions = st.builds(
    Eviction,
    team=st.sampled_from(["a", "b", "c"]),
    cluster_queue=st.sampled_from(["cq-1", "cq-2"]),
    flavor=st.sampled_from(["h100", "a100", "unpriced"]),
    reason=st.sampled_from(["Preempted", "PodsReadyTimeout", "AdmissionCheck"]),
    gpus=st.integers(0, 64).map(float),
    hours=st.floats(0, 744, allow_nan=False),
    workload=st.text("abcdef/", min_size=1, max_size=6),
)
PRICES = {"h100": 2.5, "a100": 1.1}


@settings(max_examples=examples(200))
@given(st.lists(evictions, max_size=30))
def test_money_is_conserved_and_nothing_is_guessed(found: list[Eviction]) -> None:
    lost = preempted_work(found, PRICES)
    priced = [e.gpu_hours * PRICES[e.flavor] for e in found if e.flavor in PRICES]
    assert math.fsum(lost.by_team().values()) == pytest.approx(math.fsum(priced), abs=1e-6)
    assert math.fsum(w.cost for w in lost.work) == pytest.approx(math.fsum(priced), abs=1e-6)
    unpriced = math.fsum(e.gpu_hours for e in found if e.flavor not in PRICES)
    assert lost.unpriced_gpu_hours == pytest.approx(unpriced, abs=1e-6)
    assert sum(w.workloads for w in lost.work) == len(priced)


@settings(max_examples=examples(100))
@given(st.lists(evictions, max_size=20), st.randoms(use_true_random=False))
def test_the_order_kueue_lists_workloads_in_changes_nothing(
    found: list[Eviction], rng: object
) -> None:
    shuffled = list(found)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    assert preempted_work(shuffled, PRICES, top=3) == preempted_work(found, PRICES, top=3)


def test_the_top_n_are_the_costliest_and_only_n() -> None:
    found = [
        Eviction("a", "cq-1", "h100", "Preempted", 1, 1.0, "ns/small"),
        Eviction("a", "cq-1", "h100", "Preempted", 8, 2.0, "ns/big"),
        Eviction("b", "cq-2", "a100", "Preempted", 4, 1.0, "ns/mid"),
    ]
    top = preempted_work(found, PRICES, top=2).top
    assert [t.workload for t in top] == ["ns/big", "ns/mid"]
    assert preempted_work(found, PRICES, top=0).top == ()


def test_a_fallback_price_covers_an_unpriced_flavor() -> None:
    found = [Eviction("a", "cq-1", "unpriced", "Preempted", 2, 3.0)]
    assert preempted_work(found, PRICES).by_team() == {}
    assert preempted_work(found, PRICES).unpriced_gpu_hours == 6.0
    assert preempted_work(found, PRICES, fallback=1.4).by_team() == {"a": pytest.approx(8.4)}

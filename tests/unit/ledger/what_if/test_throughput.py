"""A serving namespace at another throughput: scaled by g, the difference idle, never beyond it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from exporter.ledger.what_if.settings import WhatIfError
from exporter.ledger.what_if.throughput import Throughput, served_faster
from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.snapshot import AllocationSet

START, END = datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)


def _month(idle_gpu: float) -> AllocationSet:
    serving = Allocation(
        "n1/ns-serve/vllm",
        "ns-serve",
        "n1",
        {},
        {},
        {"gpu": 100.0, "cpu": 10.0, "storage": 5.0},
        50.0,
        usage={"cpu": 8.0, "storage": 1e9},
    )
    other = Allocation("n1/ns-a/job", "ns-a", "n1", {}, {}, {"gpu": 40.0}, 20.0)
    return AllocationSet(START, END, (other, serving), {"gpu": idle_gpu, "cpu": 0.0})


def _change(share: float, asked: float) -> Throughput:
    return Throughput("llama", "ns-serve", 1, share, 50.0, 2_000.0, asked)


def test_two_models_each_move_their_own_share_of_the_namespace() -> None:
    # Half the namespace at twice the speed, a quarter at the same: g = 1 - 0.5 x 0.5 = 0.75.
    changes = [_change(0.5, 4_000.0), _change(0.25, 2_000.0)]
    month = served_faster("k", _month(60.0), "ns-serve", changes)
    other, serving = month.allocations
    assert other == _month(60.0).allocations[0]
    assert serving.costs == {"gpu": 75.0, "cpu": 7.5, "storage": 5.0}  # storage stays
    assert (serving.gpu_hours, serving.usage) == (37.5, {"cpu": 6.0, "storage": 1e9})
    assert month.idle == {"gpu": 85.0, "cpu": 2.5}
    assert month.total() == _month(60.0).total()


def test_serving_slower_than_the_idle_allows_names_the_key() -> None:
    # At 1,000 tokens/s the namespace needs twice its 50 GPU-hours; 60.00 idle covers 100.00
    # of GPU no more than the CPU's 0.00 covers 10.00.
    with pytest.raises(WhatIfError) as caught:
        served_faster("tokens_per_second.llama", _month(60.0), "ns-serve", [_change(1.0, 1_000.0)])
    assert str(caught.value) == (
        "--what-if tokens_per_second.llama: at that throughput the month's tokens need 50.0 "
        "more GPU-hours in ns-serve than the month left idle (cpu, gpu)"
    )

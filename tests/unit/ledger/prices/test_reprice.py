"""One price per GPU-hour: the seed's month under every policy, worked by hand, and repricing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from exporter.calendar import Month
from exporter.config.schema import Config, IdlePolicy
from exporter.exposition.series import series
from exporter.ledger.attribution import IDLE, Attributor
from exporter.ledger.costs.cluster import GpuCharge
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.join import join
from exporter.ledger.prices.reprice import reprice
from exporter.ledger.result import Chargeback
from exporter.sources.kueue.flavors import FlavorRecord
from exporter.sources.kueue.records import KueueSnapshot, QuotaRecord
from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.snapshot import AllocationSet, GpuNode, OpenCostSnapshot
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots

H100 = "NVIDIA H100 80GB HBM3"
GPU = "nvidia.com/gpu"
# The seed's month: November 2026 in UTC, 720 hours. Node n1 holds 4 H100 that OpenCost
# charges 1.40 a GPU-hour. In cohort "pool", flavor h100: A holds 2 GPUs and uses 1,080
# GPU-hours, B holds 1 and uses 432, C holds 1 and uses 252; 2,880 - 1,764 = 1,116 sit idle.
NOVEMBER = Month(datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
OPENCOST = 1.40
USED = {"a": 1080.0, "b": 432.0, "c": 252.0}
# The build of docs/chargeback.md's article: 140,000 over 4 years at 90 % = 4.4394 an hour,
# 4 x 700 W x PUE 1.4 x 0.12 = 0.4704, operations 0.70: 5.6098 a node, 1.402443 a GPU-hour.
BUILD = {
    "node_capex": 140_000,
    "gpus_per_node": 4,
    "amortisation_years": 4,
    "availability": 0.9,
    "gpu_watts": 700,
    "pue": 1.4,
    "energy_price_per_kwh": 0.12,
    "node_operations_per_hour": 0.70,
}
BUILT = 1.4024427194317606


def _alloc(team: str, gpu_hours: float, price: float = OPENCOST) -> Allocation:
    ns = f"ns-{team}"
    costs = {"gpu": gpu_hours * price, "cpu": 0.01 * gpu_hours}
    return Allocation(f"n1/{ns}/job:x", ns, "n1", {}, {}, costs, gpu_hours, H100)


def _window(start: datetime, end: datetime, share: float) -> AllocationSet:
    allocations = tuple(_alloc(t, h * share) for t, h in sorted(USED.items()))
    idle = {"gpu": 1116.0 * share * OPENCOST, "cpu": 3.0 * share, "ram": 0.0}
    return AllocationSet(start, end, allocations, idle)


def _seed() -> Snapshots:
    month = _window(NOVEMBER.start, NOVEMBER.end, 1.0)
    rate = _window(NOVEMBER.end - timedelta(hours=1), NOVEMBER.end, 1 / 720)
    queues = (
        QuotaRecord("cq-a", "pool", "h100", GPU, 2.0, usage=2.0),
        QuotaRecord("cq-b", "pool", "h100", GPU, 1.0, usage=1.0),
        QuotaRecord("cq-c", "pool", "h100", GPU, 1.0),
    )
    flavors = (FlavorRecord("h100", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}),)
    assets = (
        GpuNode("n1", 4, 4.0, 4 * OPENCOST, {"nvidia_com_gpu_product": "NVIDIA-H100-80GB-HBM3"}),
    )
    opencost = OpenCostSnapshot(rate=rate, month=month, gpu_nodes=assets)
    return Snapshots(opencost=opencost, kueue=KueueSnapshot(queues, flavors=flavors))


def _config(policy: IdlePolicy, **extra: Any) -> Config:
    teams = [{"name": t, "namespaces": [f"ns-{t}"], "cluster_queues": [f"cq-{t}"]} for t in "abc"]
    return Config.model_validate(
        {
            "timezone": "UTC",
            "idle_policy": policy.value,
            "teams": teams,
            "sources": {"kueue": {"url": "https://k8s.invalid:6443"}},
            **extra,
        }
    )


def _month(policy: IdlePolicy, **extra: Any) -> tuple[dict[str, float], Chargeback]:
    config = _config(policy, **extra)
    result = join(config, Attributor(config), _seed(), Reading.closed_month(NOVEMBER))
    assert result.month is not None
    totals = {t: round(sum(c.values()), 2) for t, c in _ledger(result).by_team().items()}
    return totals, result


def _ledger(result: Chargeback) -> Ledger:
    assert result.month is not None
    return result.month


def _charge(result: Chargeback) -> GpuCharge:
    assert result.cluster is not None and result.cluster.gpu_charge is not None
    return result.cluster.gpu_charge


def _no_negative_row(result: Chargeback) -> None:
    assert result.month is not None
    assert all(v >= 0 for (_, c), v in _ledger(result).costs.items() if c != "lent")


def test_the_seed_built_price_separate() -> None:
    totals, result = _month(IdlePolicy.SEPARATE, gpu_price_build={H100: BUILD})
    # Every GPU-hour at 1.402443: A 1,080 = 1,514.64, B 432 = 605.86, C 252 = 353.42, and the
    # 1,116 idle = 1,565.13 on __idle__ (plus 3.00 of idle CPU); CPU 0.01 a GPU-hour.
    gpu = {t: v for (t, c), v in _ledger(result).costs.items() if c == "gpu"}
    assert {t: round(v, 2) for t, v in gpu.items()} == {
        "a": 1514.64,
        "b": 605.86,
        "c": 353.42,
        IDLE: 1565.13,
    }
    assert round(sum(gpu.values()), 2) == 4039.04  # 2,880 x 1.402443
    assert totals[IDLE] == 1568.13
    _no_negative_row(result)


def test_the_seed_built_price_proportional() -> None:
    totals, result = _month(IdlePolicy.PROPORTIONAL, gpu_price_build={H100: BUILD})
    # Idle GPU 1,565.13 shared by GPU cost: A 1,514.64 + 1,565.13 x 1,080 / 1,764 = 2,472.88,
    # B 605.86 + 958.24 x 0.4 ... = 989.15, C 577.01; idle CPU 3.00 by CPU use (17.64).
    gpu_and_share = {
        t: round(c.get("gpu", 0.0) + c.get("idle_share", 0.0) - 3.0 * USED[t] / 1764, 2)
        for t, c in _ledger(result).by_team().items()
    }
    assert gpu_and_share == {"a": 2472.88, "b": 989.15, "c": 577.01}
    assert IDLE not in totals
    assert round(sum(totals.values()), 2) == round(4039.04 + 17.64 + 3.0, 2)
    _no_negative_row(result)


def test_the_seed_built_price_reservation_leaves_no_negative_idle() -> None:
    totals, result = _month(IdlePolicy.RESERVATION, gpu_price_build={H100: BUILD})
    # The quota at 1.402443 x 720: A 2 GPUs = 2,019.52, B and C 1,009.76 each: all 2,880
    # GPU-hours, so __idle__ keeps nothing (before, OpenCost's 1.40 left it at -7.04).
    gpu = {t: v for (t, c), v in _ledger(result).costs.items() if c == "gpu"}
    assert {t: round(v, 2) for t, v in gpu.items()} == {"a": 2019.52, "b": 1009.76, "c": 1009.76}
    assert round(sum(gpu.values()), 2) == 4039.04
    _no_negative_row(result)
    assert totals.get(IDLE, 0.0) == 0.0


def test_a_flavor_price_governs_every_gpu_hour_of_its_nodes() -> None:
    # gpu_flavor_prices {h100: 1.50} gave __idle__ -288.00 (0.10 x 2,880) under reservation.
    for policy in IdlePolicy:
        _, result = _month(policy, gpu_flavor_prices={"h100": 1.50})
        gpu = sum(
            v for (_, c), v in _ledger(result).costs.items() if c in ("gpu", "borrowed", "lent")
        )
        idle_share = sum(v for (_, c), v in _ledger(result).costs.items() if c == "idle_share")
        # Idle CPU (3.00) is shared too, except under `separate`.
        cpu_share = 0.0 if policy is IdlePolicy.SEPARATE else 3.0
        assert gpu + idle_share - cpu_share == pytest.approx(2880 * 1.50)
        _no_negative_row(result)
        assert _charge(result).difference_month == pytest.approx(288.00)


def test_opencost_charge_is_shown_beside_the_governing_price() -> None:
    _, result = _month(IdlePolicy.RESERVATION, gpu_price_build={H100: BUILD})
    served = {
        (s.family.base, tuple(sorted(s.labels))): s.value
        for s in series(result)
        if s.family.base.startswith(("gpu_price_per_hour", "cluster_gpu_price_difference"))
    }
    model = (("kind", "model"), ("name", H100))
    assert served[("gpu_price_per_hour", (*model, ("source", "price_build")))] == pytest.approx(
        BUILT
    )
    assert served[("gpu_price_per_hour", (*model, ("source", "opencost_charge")))] == pytest.approx(
        1.40
    )
    # The flavor takes its nodes' price, every GPU-hour at the build's.
    flavor = (("kind", "flavor"), ("name", "h100"))
    assert served[
        ("gpu_price_per_hour", (*flavor, ("source", "opencost_charge")))
    ] == pytest.approx(BUILT)
    # 2,880 GPU-hours x 0.002443 = 7.04 over the month; 4 x 0.002443 an hour.
    assert served[("cluster_gpu_price_difference_month_to_date", ())] == pytest.approx(
        7.036, abs=1e-3
    )
    assert served[("cluster_gpu_price_difference_per_hour", ())] == pytest.approx(
        4 * (BUILT - 1.40)
    )


def test_without_a_governing_price_opencost_stands() -> None:
    totals, result = _month(IdlePolicy.RESERVATION)
    # OpenCost's 1.40: A 2 x 720 x 1.40 = 2,016.00, B and C 1,008.00, plus CPU and its idle
    # shared by CPU use (A 10.80 + 1.84, B 4.32 + 0.73, C 2.52 + 0.43).
    assert totals == {"a": 2028.64, "b": 1013.05, "c": 1010.95}
    assert _charge(result).difference_month == 0.0


def test_idle_by_node_reprices_each_nodes_idle_at_its_own_ratio() -> None:
    start, end = NOVEMBER.start, NOVEMBER.start + timedelta(hours=1)
    # n1 (price 1.40, governed at 2.80) runs 1 of its 2 GPUs; n2 (0.50, not governed) 0 of 2.
    allocations = (_alloc("a", 1.0),)
    window = AllocationSet(
        start,
        end,
        allocations,
        {"gpu": 1.40 + 1.00},
        {"n1": {"gpu": 2.80}, "n2": {"gpu": 1.00}},
    )
    priced = reprice(window, lambda node, _model: 2.80 if node == "n1" else None)
    assert priced.allocations[0].costs["gpu"] == pytest.approx(2.80)
    # n1's idle GPU-hour at 2.80, n2's two at OpenCost's 0.50.
    assert priced.idle["gpu"] == pytest.approx(2.80 + 1.00)
    assert priced.node_costs["n1"]["gpu"] == pytest.approx(5.60)
    assert priced.node_costs["n2"]["gpu"] == pytest.approx(1.00)


def test_reprice_leaves_a_window_nothing_governs_as_it_was() -> None:
    window = _window(NOVEMBER.start, NOVEMBER.end, 1.0)
    assert reprice(window, lambda _n, _m: None) == window

"""GPU prices per flavor and model: a two-flavor cluster worked by hand, overrides, fallbacks."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from exporter.calendar import month_start
from exporter.config.schema import Config, IdlePolicy
from exporter.exposition.catalogue.gpus import TEAM_GPU_WASTE_COST_PER_HOUR
from exporter.exposition.series import series
from exporter.ledger.attribution import IDLE, Attributor
from exporter.ledger.join import join
from exporter.ledger.prices.gpu import GpuPrices, canonical_model, node_models
from exporter.sources.dcgm.records import DcgmSnapshot, GpuRecord
from exporter.sources.kueue.flavors import FlavorRecord
from exporter.sources.kueue.records import KueueSnapshot, QuotaRecord
from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.snapshot import AllocationSet, GpuNode, OpenCostSnapshot
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import FIXED_NOW

GPU = "nvidia.com/gpu"
H100, L40S = "NVIDIA H100 80GB HBM3", "NVIDIA L40S"
PRODUCT = "nvidia.com/gpu.product"
# FIXED_NOW is 2026-11-15 12:30 UTC: the month to date is 14.5 days, November has 720 hours.
MONTH_HOURS = 348.5

# The cluster: node-h has 4 H100 at 2.10 per GPU-hour, node-l 4 L40S at 0.90. All GPU money is
# 4 x 2.10 + 4 x 0.90 = 12.00 an hour. Team a runs 2 H100, team b 2 L40S; team c runs nothing.
FLAVORS = (
    FlavorRecord("h100", {PRODUCT: "NVIDIA-H100-80GB-HBM3"}),
    FlavorRecord("l40s", {PRODUCT: "NVIDIA-L40S", "node-pool": "inference"}),
    FlavorRecord("default-flavor"),  # CPU quota only: no nodeLabels, every node
)
ASSETS = (
    # As OpenCost sanitises node label keys; the other labels must not get in the way.
    GpuNode("node-h", 4, 4.0, 8.40, {"nvidia_com_gpu_product": "NVIDIA-H100-80GB-HBM3"}),
    GpuNode(
        "node-l",
        4,
        4.0,
        3.60,
        {"nvidia_com_gpu_product": "NVIDIA-L40S", "node_pool": "inference", "zone": "b"},
    ),
)
# Quota in cohort "pool". h100: a holds 3 and uses 2, b holds 1 and uses none. l40s: b holds 1
# and uses 2 (borrows 1), c holds 2 and uses none (lendable 2, so it lends the 1 b borrows).
QUEUES = (
    QuotaRecord("cq-a", "pool", "h100", GPU, 3.0, usage=2.0),
    QuotaRecord("cq-b", "pool", "h100", GPU, 1.0),
    QuotaRecord("cq-b", "pool", "l40s", GPU, 1.0, usage=2.0, borrowed=1.0),
    QuotaRecord("cq-c", "pool", "l40s", GPU, 2.0),
    QuotaRecord("cq-a", "pool", "default-flavor", "cpu", 8.0, usage=4.0),
)


def _alloc(team: str, node: str, gpu_hours: float, gpu_cost: float) -> Allocation:
    costs = {"gpu": gpu_cost, "cpu": 0.5 * gpu_hours}
    ns = f"ns-{team}"
    return Allocation(f"{node}/{ns}/job:x", ns, node, {}, {}, costs, gpu_hours)


def _window(hours: float) -> AllocationSet:
    start = FIXED_NOW - timedelta(hours=hours)
    allocations = (
        _alloc("a", "node-h", 2 * hours, 2 * 2.10 * hours),
        _alloc("b", "node-l", 2 * hours, 2 * 0.90 * hours),
    )
    # Idle GPU is what the nodes cost beyond the allocations: 12.00 - 4.20 - 1.80 = 6.00 an hour.
    idle = {"gpu": 6.00 * hours, "cpu": 0.0, "ram": 0.0}
    return AllocationSet(start, FIXED_NOW, allocations, idle)


def _config(policy: IdlePolicy, **extra: Any) -> Config:
    teams = [{"name": t, "namespaces": [f"ns-{t}"], "cluster_queues": [f"cq-{t}"]} for t in "abc"]
    return Config.model_validate(
        {
            "idle_policy": policy.value,
            "teams": teams,
            "sources": {"kueue": {"url": "https://k8s.invalid:6443"}},
            **extra,
        }
    )


def _records(assets: tuple[GpuNode, ...] | None = ASSETS) -> Snapshots:
    month = _window(MONTH_HOURS)
    assert month.start == month_start(FIXED_NOW, _config(IdlePolicy.SEPARATE).zone)
    opencost = OpenCostSnapshot(rate=_window(1.0), month=month, gpu_nodes=assets)
    return Snapshots(opencost=opencost, kueue=KueueSnapshot(QUEUES, flavors=FLAVORS))


def _costs(ledger: Any, component: str) -> dict[str, float]:
    return {t: v for (t, c), v in ledger.costs.items() if c == component}


def test_two_flavors_reservation_hourly_worked_by_hand() -> None:
    config = _config(IdlePolicy.RESERVATION)
    result = join(config, Attributor(config), _records(), Reading.open(FIXED_NOW, config.zone))
    hourly = result.hourly
    assert hourly is not None
    # Prices: h100 = 4.20 / 2 GPU-hours on node-h = 2.10; l40s = 1.80 / 2 on node-l = 0.90.
    # (The old blended price was 6.00 / 4 = 1.50 for both.)
    # a: 3 H100 x 2.10 = 6.30. b: 1 H100 x 2.10 + 1 L40S x 0.90 = 3.00, plus 1 borrowed L40S
    # x 0.90 = 0.90. c: 2 L40S x 0.90 = 1.80, minus the 1 L40S b uses of it: -0.90.
    # __idle__: 12.00 - 6.30 - 3.00 - 0.90 - 1.80 + 0.90 = 0.90, the one L40S nobody reserves.
    assert _costs(hourly, "gpu") == pytest.approx({"a": 6.30, "b": 3.00, "c": 1.80, IDLE: 0.90})
    assert _costs(hourly, "borrowed") == pytest.approx({"b": 0.90})
    assert _costs(hourly, "lent") == pytest.approx({"c": -0.90})
    # Conservation: GPU money is still the 12.00 the nodes cost, and CPU is untouched.
    gpu_money = sum(v for (_, c), v in hourly.costs.items() if c in ("gpu", "borrowed", "lent"))
    assert gpu_money == pytest.approx(12.00)
    assert hourly.total() == pytest.approx(_records().opencost.rate.total())  # type: ignore[union-attr]


def test_two_flavors_reservation_month_to_date_worked_by_hand() -> None:
    config = _config(IdlePolicy.RESERVATION)
    result = join(config, Attributor(config), _records(), Reading.open(FIXED_NOW, config.zone))
    month = result.month
    assert month is not None
    # 348.5 hours so far. h100: a used 697 GPU-hours of 3 x 348.5 = 1045.5 held: no borrowing.
    # l40s: b used 697 of 1 x 348.5 held, so it borrowed 348.5 GPU-hours; c had 697 spare and
    # lends all 348.5. In money (price x GPU-hours):
    # a: 3 x 2.10 x 348.5 = 2195.55; b: (2.10 + 0.90) x 348.5 = 1045.50, borrowed 0.90 x 348.5
    # = 313.65; c: 2 x 0.90 x 348.5 = 627.30, lent -313.65. All GPU money: 12 x 348.5 = 4182.00,
    # so __idle__ keeps 4182.00 - 2195.55 - 1045.50 - 313.65 - 627.30 + 313.65 = 313.65.
    expected = {"a": 2195.55, "b": 1045.50, "c": 627.30, IDLE: 313.65}
    assert _costs(month, "gpu") == pytest.approx(expected)
    assert _costs(month, "borrowed") == pytest.approx({"b": 313.65})
    assert _costs(month, "lent") == pytest.approx({"c": -313.65})
    assert month.total() == pytest.approx(_window(MONTH_HOURS).total())


def test_two_flavors_default_budgets_worked_by_hand() -> None:
    config = _config(
        IdlePolicy.RESERVATION,
        teams=[
            {"name": "a", "namespaces": ["ns-a"], "cluster_queues": ["cq-a"]},
            {"name": "b", "namespaces": ["ns-b"], "cluster_queues": ["cq-b"]},
            {"name": "c", "cluster_queues": ["cq-c"], "budget": {"gpu": 500.0}},
        ],
    )
    result = join(config, Attributor(config), _records(), Reading.open(FIXED_NOW, config.zone))
    # November has 720 hours. a: 3 x 2.10 x 720 = 4536.00. b: (1 x 2.10 + 1 x 0.90) x 720 =
    # 2160.00. c configures its own budget, which stays as configured.
    assert result.budgets == pytest.approx(
        {("a", "gpu"): 4536.00, ("b", "gpu"): 2160.00, ("c", "gpu"): 500.0}
    )


def test_two_flavors_proportional_moves_borrowed_cost_at_the_flavor_price() -> None:
    config = _config(IdlePolicy.PROPORTIONAL)
    result = join(config, Attributor(config), _records(), Reading.open(FIXED_NOW, config.zone))
    hourly = result.hourly
    assert hourly is not None
    # b borrows 1 L40S: 1 x 0.90 of its 1.80 GPU cost is borrowed (not 1 x 1.50 blended).
    assert _costs(hourly, "borrowed") == pytest.approx({"b": 0.90})
    assert _costs(hourly, "gpu") == pytest.approx({"a": 4.20, "b": 0.90})
    assert "lent" not in {c for _, c in hourly.costs}
    assert hourly.total() == pytest.approx(_window(1.0).total())


def test_without_assets_dcgm_models_find_the_flavors_nodes() -> None:
    gpus = [GpuRecord("node-h", "0", "GPU-h0", H100), GpuRecord("node-l", "0", "GPU-l0", L40S)]
    prices = GpuPrices(
        (_window(1.0),), assets=None, flavors=FLAVORS[:1], dcgm_models=node_models(gpus)
    )
    # h100 selects on the product only, which DCGM's modelName gives (spaces as dashes).
    assert prices.flavor("h100") == pytest.approx(2.10)
    assert prices.model(L40S) == pytest.approx(0.90)
    # l40s also wants node-pool=inference, which only the node assets would say: no node, no
    # price of its own (the join then falls back to the blended 1.50).
    assert (
        GpuPrices((_window(1.0),), flavors=FLAVORS, dcgm_models=node_models(gpus)).flavor("l40s")
        is None
    )
    assert prices.blended == pytest.approx(1.50)


def test_assets_price_a_flavor_whose_nodes_ran_no_gpu_pod() -> None:
    idle_night = AllocationSet(FIXED_NOW - timedelta(hours=1), FIXED_NOW, (), {"gpu": 12.0})
    prices = GpuPrices((idle_night,), assets=ASSETS, flavors=FLAVORS)
    # No allocation anywhere: node-l's asset says 3.60 for 4 GPU-hours.
    assert prices.flavor("l40s") == pytest.approx(0.90)
    assert prices.flavor("h100") == pytest.approx(2.10)
    # A flavor that selects every node averages by GPU-hours: 12.00 / 8.
    assert prices.flavor("default-flavor") == pytest.approx(1.50)


def test_a_flavor_for_every_node_is_exactly_the_blended_price() -> None:
    window = _window(MONTH_HOURS)
    blended = sum(a.costs["gpu"] for a in window.allocations) / sum(
        a.gpu_hours for a in window.allocations
    )
    prices = GpuPrices((window,), assets=ASSETS, flavors=(FlavorRecord("any"),))
    # Bit for bit, so a single-flavor cluster is charged exactly as before.
    assert prices.flavor("any") == blended
    assert prices.flavor("not-listed-by-kueue") == blended
    assert prices.blended == blended


def test_config_prices_by_flavor_and_by_model_win() -> None:
    config = _config(
        IdlePolicy.RESERVATION,
        gpu_flavor_prices={"l40s": 1.00},
        gpu_prices={"nvidia h100 80gb hbm3": 2.50},
    )
    result = join(config, Attributor(config), _records(), Reading.open(FIXED_NOW, config.zone))
    hourly = result.hourly
    assert hourly is not None
    # h100 from the model price (node-h's product label, spelled differently): a 3 x 2.50 =
    # 7.50; b 1 x 2.50 + 1 x 1.00 = 3.50, borrowed 1 x 1.00; c 2 x 1.00 = 2.00, lent -1.00.
    assert _costs(hourly, "gpu")["a"] == pytest.approx(7.50)
    assert _costs(hourly, "gpu")["b"] == pytest.approx(3.50)
    assert _costs(hourly, "borrowed") == pytest.approx({"b": 1.00})
    assert _costs(hourly, "lent") == pytest.approx({"c": -1.00})
    # Every GPU-hour is at the governing price, the idle ones too: node-h's 4 at 2.50 and
    # node-l's 4 at 1.00 are 14.00 of GPU money (OpenCost charged 12.00), so __idle__ keeps
    # 14.00 - 7.50 - 3.50 - 1.00 - 2.00 + 1.00 = 1.00, the one L40S nobody reserves, at 1.00.
    assert _costs(hourly, "gpu")[IDLE] == pytest.approx(1.00)
    assert hourly.total() == pytest.approx(14.00 + 2 * 0.5 * 2)
    assert result.cluster is not None and result.cluster.gpu_charge is not None
    charge = result.cluster.gpu_charge
    assert (charge.applied_per_hour, charge.opencost_per_hour) == pytest.approx((14.00, 12.00))
    assert charge.difference_month == pytest.approx(2.00 * MONTH_HOURS)


def test_model_price_overrides_count_in_a_mixed_flavor() -> None:
    # One flavor over both nodes, with H100 priced in config at 3.00: the GPU-hours on node-h
    # count at 3.00 and those on node-l at what OpenCost charged (0.90): (2 x 3 + 2 x 0.9) / 4.
    prices = GpuPrices((_window(1.0),), assets=ASSETS, by_model={H100: 3.00})
    assert prices.flavor("everything") == pytest.approx(1.95)
    assert prices.model("NVIDIA-H100-80GB-HBM3") == 3.00


def test_flavor_of_node_prefers_the_most_specific_flavor() -> None:
    prices = GpuPrices((_window(1.0),), assets=ASSETS, flavors=FLAVORS)
    assert prices.flavor_of_node("node-l", ["default-flavor", "h100", "l40s"]) == "l40s"
    assert prices.flavor_of_node("node-h", ["h100", "l40s"]) == "h100"
    assert prices.flavor_of_node("node-x", ["h100", "l40s"]) is None
    assert prices.flavor_nodes("l40s") == frozenset({"node-l"})


def test_canonical_model_ignores_case_and_separators() -> None:
    assert canonical_model("NVIDIA H100 80GB HBM3") == canonical_model("nvidia-h100_80gb  hbm3")
    assert canonical_model(H100) != canonical_model(L40S)
    assert canonical_model("  ") == ""


def test_waste_uses_the_price_of_each_gpus_model() -> None:
    config = _config(
        IdlePolicy.RESERVATION,
        sources={
            "kueue": {"url": "https://k8s.invalid:6443"},
            "dcgm": {"urls": ["http://dcgm:9400/metrics"]},
        },
    )
    gpus = (
        GpuRecord("node-h", "0", "GPU-h0", H100, namespace="ns-a", pod="p", utilisation=0.0),
        GpuRecord("node-l", "0", "GPU-l0", L40S, namespace="ns-b", pod="q", utilisation=0.0),
        GpuRecord("node-l", "1", "GPU-l1", L40S, namespace="ns-b", pod="q", utilisation=0.9),
    )
    bundle = _records()
    bundle = Snapshots(bundle.opencost, DcgmSnapshot(gpus), bundle.kueue)
    result = join(config, Attributor(config), bundle, Reading.open(FIXED_NOW, config.zone))
    waste = {
        dict(s.labels)["team"]: s.value
        for s in series(result)
        if s.family is TEAM_GPU_WASTE_COST_PER_HOUR
    }
    # a leaves 1 H100 idle: 2.10 an hour; b leaves 1 L40S idle: 0.90 (blended would be 1.50).
    assert waste == pytest.approx({"a": 2.10, "b": 0.90})

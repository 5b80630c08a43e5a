"""GPU state per team: busy, idle, unallocated, utilisation and waste, computed by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from exporter.config.schema import Config
from exporter.exposition.catalogue.gpus import GPUS
from exporter.exposition.samples import Sample
from exporter.exposition.series.gpus import gpu_samples
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.ledger.costs.gpus import model_price, team_gpus
from exporter.sources.dcgm.records import DcgmSnapshot, GpuRecord
from exporter.sources.dcgm.source import parse_metrics

FIXTURE = Path(__file__).parents[3] / "fixtures" / "dcgm" / "mig_and_idle.txt"
PRICES = model_price({"NVIDIA H100 80GB HBM3": 2.0, "NVIDIA A100 80GB PCIe": 1.4})


def attributor() -> Attributor:
    return Attributor(
        Config.model_validate(
            {"teams": [{"name": "a", "namespaces": ["ns-a"]}, {"name": "b", "namespaces": []}]}
        )
    )


def values(samples: list[Sample]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.family.base, s.labels): s.value for s in samples}


def key(family: str, **labels: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return (family, tuple(labels.items()))


def test_hand_computed_scenario_with_mig_and_an_unlabelled_idle_gpu() -> None:
    snapshot = DcgmSnapshot(tuple(parse_metrics(FIXTURE.read_text())))
    got = values(gpu_samples(team_gpus(snapshot, attributor(), 0.05, PRICES)))
    # Team a: the whole H100 (engine 0.9) and the 1g.10gb slice (0.5, weight 1/7); both busy.
    assert got[key("gpus", team="a", state="busy")] == pytest.approx(8 / 7)
    assert got[key("gpus", team="a", state="idle")] == 0.0
    # (0.9 x 1 + 0.5 x 1/7) / (8/7) = 6.8 / 8
    assert got[key("team_gpu_utilization_ratio", team="a")] == pytest.approx(0.85)
    assert got[key("team_gpu_waste_cost_per_hour", team="a")] == 0.0
    # Team b (through its pod label team=b): a 3g.40gb slice at 2 %, below the 5 % threshold.
    assert got[key("gpus", team="b", state="idle")] == pytest.approx(3 / 7)
    assert got[key("gpus", team="b", state="busy")] == 0.0
    assert got[key("team_gpu_utilization_ratio", team="b")] == pytest.approx(0.02)
    assert got[key("team_gpu_waste_cost_per_hour", team="b")] == pytest.approx(3 / 7 * 1.4)
    # Nobody holds the unlabelled H100 or the free 3g.40gb slice.
    assert got[key("gpus", team=UNALLOCATED, state="unallocated")] == pytest.approx(1 + 3 / 7)
    assert key("team_gpu_utilization_ratio", team=UNALLOCATED) not in got
    # The MIG GPU's three slices plus two whole GPUs: 1/7 + 3/7 + 3/7 + 1 + 1 = 3.
    assert sum(v for (f, _), v in got.items() if f == "gpus") == pytest.approx(3.0)


def gpu(ns: str, use: float | None, *, share: float = 1.0, model: str = "H100") -> GpuRecord:
    return GpuRecord(
        "n", "0", "GPU-0", model, namespace=ns, pod="p" if ns else "", utilisation=use, share=share
    )


def test_threshold_is_strict_below_and_unknown_utilisation_is_busy() -> None:
    snapshot = DcgmSnapshot((gpu("ns-a", 0.05), gpu("ns-a", 0.049), gpu("ns-a", None)))
    got = values(gpu_samples(team_gpus(snapshot, attributor(), 0.05, lambda _: 3.0)))
    assert got[key("gpus", team="a", state="busy")] == 2.0
    assert got[key("gpus", team="a", state="idle")] == 1.0
    assert got[key("team_gpu_utilization_ratio", team="a")] == pytest.approx((0.05 + 0.049) / 2)
    assert got[key("team_gpu_waste_cost_per_hour", team="a")] == 3.0


def test_a_gpu_whose_sample_was_corrupt_is_counted_but_its_teams_use_is_not_guessed() -> None:
    corrupt = GpuRecord("n", "1", "GPU-1", "H100", namespace="ns-a", pod="q", corrupt="non_finite")
    snapshot = DcgmSnapshot((gpu("ns-a", 0.0), corrupt, gpu("ns-x", 0.5)))
    got = values(gpu_samples(team_gpus(snapshot, attributor(), 0.05, lambda _: 3.0)))
    assert got[key("gpus", team="a", state="busy")] == 1.0  # still counted, with its pod
    assert got[key("gpus", team="a", state="idle")] == 1.0
    # A mean or a waste that left that GPU out would read wrong: none for this refresh.
    assert key("team_gpu_utilization_ratio", team="a") not in got
    assert key("team_gpu_waste_cost_per_hour", team="a") not in got
    assert got[key("team_gpu_utilization_ratio", team=UNALLOCATED)] == 0.5


def test_an_idle_gpu_without_a_price_gives_no_waste_series() -> None:
    snapshot = DcgmSnapshot((gpu("ns-a", 0.0, model="mystery"),))
    got = values(gpu_samples(team_gpus(snapshot, attributor(), 0.05, PRICES)))
    assert key("team_gpu_waste_cost_per_hour", team="a") not in got
    assert got[key("gpus", team="a", state="idle")] == 1.0


def test_a_pod_nobody_owns_is_allocated_on_unallocated() -> None:
    snapshot = DcgmSnapshot((gpu("ns-x", 0.5), gpu("", 0.0)))
    got = values(gpu_samples(team_gpus(snapshot, attributor(), 0.05, PRICES)))
    assert got[key("gpus", team=UNALLOCATED, state="busy")] == 1.0
    assert got[key("gpus", team=UNALLOCATED, state="unallocated")] == 1.0


def test_empty_snapshot_reports_zero_unallocated() -> None:
    got = gpu_samples(team_gpus(DcgmSnapshot(()), attributor(), 0.05, PRICES))
    assert got == [Sample.of(GPUS, 0.0, team=UNALLOCATED, state="unallocated")]


def test_model_price_lookup() -> None:
    lookup = model_price({"NVIDIA H100 80GB HBM3": 2.0}, default=1.0)
    assert lookup("NVIDIA H100 80GB HBM3") == 2.0
    assert lookup("nvidia h100 80gb hbm3") == 2.0
    assert lookup("other") == 1.0
    assert model_price({})("x") is None

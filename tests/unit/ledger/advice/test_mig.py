"""MIG tables: models found from DCGM's names, the smallest profile that fits."""

from __future__ import annotations

import pytest

from exporter.ledger.advice.mig import MIB_PER_GB, TABLES, mig_model, smallest_fit


@pytest.mark.parametrize(
    ("name", "table"),
    [
        ("NVIDIA H100 80GB HBM3", "H100 80GB"),
        ("NVIDIA H100 PCIe", "H100 80GB"),
        ("NVIDIA H100 NVL", "H100 94GB"),
        ("NVIDIA-H100-94GB", "H100 94GB"),
        ("NVIDIA A100-SXM4-40GB", "A100 40GB"),
        ("NVIDIA A100 80GB PCIe", "A100 80GB"),
        ("NVIDIA H200", "H200 141GB"),
        ("nvidia_h200_nvl", "H200 141GB"),
        ("NVIDIA A30", "A30 24GB"),
    ],
)
def test_models_are_found_from_dcgm_names(name: str, table: str) -> None:
    found = mig_model(name)
    assert found is not None
    assert found.name == table


@pytest.mark.parametrize("name", ["NVIDIA A100", "NVIDIA GH200 480GB", "NVIDIA L40S", "Tesla T4"])
def test_models_without_a_known_table_get_none(name: str) -> None:
    assert mig_model(name) is None


def test_tables_follow_the_guide() -> None:
    for table in TABLES.values():
        sizes = {p.slices for p in table.profiles}
        assert sizes <= ({1, 2, 4} if table.slices == 4 else {1, 2, 3, 4, 7})
        assert table.profiles[-1].memory_gb == table.memory_gb  # the whole GPU last
        for p in table.profiles:
            # Instances never hold more slices than the GPU has.
            assert p.instances * p.slices <= table.slices
    h100 = {p.name: p.instances for p in TABLES["H100 80GB"].profiles}
    assert h100 == {
        "1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1,
    }  # fmt: skip
    a30 = TABLES["A30 24GB"]
    assert [(p.name, a30.share(p)) for p in a30.profiles][1] == ("2g.12gb", 0.5)


def test_smallest_fit_takes_fewest_slices_then_least_memory() -> None:
    h100 = TABLES["H100 80GB"]
    fit = smallest_fit(h100, 7_500, 0.02, 0.8)
    assert fit is not None
    assert fit.name == "1g.10gb"
    # 12,000 MiB needs 20 GB at 0.8 headroom: one slice still, with the larger memory.
    fit = smallest_fit(h100, 12_000, 0.02, 0.8)
    assert fit is not None
    assert fit.name == "1g.20gb"
    # 40 % activity needs 4 slices at 0.8 headroom (3/7 x 0.8 = 34 %).
    fit = smallest_fit(h100, 1_000, 0.40, 0.8)
    assert fit is not None
    assert fit.name == "4g.40gb"


def test_nothing_fits_when_only_the_whole_gpu_does() -> None:
    h100 = TABLES["H100 80GB"]
    assert smallest_fit(h100, 40 * MIB_PER_GB, 0.1, 0.8) is None
    assert smallest_fit(h100, 1_000, 0.5, 0.8) is None
    assert smallest_fit(TABLES["A30 24GB"], 1_000, 0.45, 0.8) is None

"""MIG: a partitioned GPU's records add up to exactly one GPU, for every profile family."""

from __future__ import annotations

import math

import httpx
import pytest

from exporter.config.schema import Config, DcgmConfig, SourcesConfig
from exporter.errors import RecordsDropped
from exporter.exposition.series.gpus import gpu_samples
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.ledger.costs.gpus import team_gpus
from exporter.sources.checks import OUT_OF_RANGE, Tally
from exporter.sources.dcgm.source import (
    KIND,
    UNSLICED,
    DcgmSnapshot,
    GpuRecord,
    build_client,
    mig_share,
    mig_slices,
    parse_metrics,
)
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW, UTC_ZONE

ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"


def instance(
    model: str, gi: int, profile: str, *, gpu: int = 0, pod: str = "", use: float = 0.5
) -> str:
    # Lower-case hostname and pod_name/pod_namespace: the labels of older dcgm-exporters.
    labels = (
        f'gpu="{gpu}",UUID="GPU-aa{gpu}",modelName="{model}",hostname="node-7",'
        f'GPU_I_PROFILE="{profile}",GPU_I_ID="{gi}"'
    )
    if pod:
        labels += f',pod_namespace="ns-a",pod_name="{pod}"'
    return f"{ACTIVE}{{{labels}}} {use}\n"


def device(model: str, *, gpu: int = 0) -> str:
    # The device-level series dcgm-exporter also prints for a GPU in MIG mode.
    labels = f'gpu="{gpu}",UUID="GPU-aa{gpu}",modelName="{model}",hostname="node-7"'
    return f"DCGM_FI_DEV_FB_USED{{{labels}}} 1024\n"


def gpu_total(records: list[GpuRecord], gpu: str = "0") -> float:
    return math.fsum(r.share for r in records if r.gpu == gpu)


@pytest.mark.parametrize(
    ("model", "profiles", "rest"),
    [
        # A100 40GB: 3g.20gb takes 4 of 8 memory slices, so two fill the memory and strand the
        # seventh compute slice: it is nobody's, so it is unallocated.
        ("NVIDIA A100-SXM4-40GB", ["3g.20gb", "3g.20gb"], 1),
        ("NVIDIA A100 80GB PCIe", ["4g.40gb", "2g.20gb"], 1),
        ("NVIDIA A100 80GB PCIe", ["1g.10gb"] * 7, 0),
        ("NVIDIA H100 80GB HBM3", ["3g.40gb", "3g.40gb"], 1),
        ("NVIDIA H100 80GB HBM3", ["1g.10gb+me", "2g.20gb"], 4),
        ("NVIDIA H100 NVL", ["7g.94gb"], 0),
        ("NVIDIA H200", ["1g.18gb"], 6),
        ("NVIDIA B200", ["1g.23gb-me", "3g.90gb"], 3),
        ("NVIDIA A30", ["2g.12gb", "1g.6gb"], 1),
        ("NVIDIA A30", ["1g.6gb+me"], 3),
        ("NVIDIA A30", ["4g.24gb"], 0),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", ["2g.48gb"], 2),
    ],
)
def test_instances_and_the_unsliced_rest_add_up_to_one_gpu(
    model: str, profiles: list[str], rest: int
) -> None:
    text = device(model) + "".join(
        instance(model, gi, p, pod=f"p{gi}" if gi % 2 else "") for gi, p in enumerate(profiles)
    )
    records = parse_metrics(text)
    slices = mig_slices(model)
    assert gpu_total(records) == pytest.approx(1.0, abs=1e-12)
    unsliced = [r for r in records if r.mig_instance == UNSLICED]
    if rest:
        (record,) = unsliced
        assert record.share == rest / slices
        assert not record.allocated and record.uuid == "GPU-aa0" and record.node == "node-7"
    else:
        assert unsliced == []
    assert all(r.mig_instance for r in records)  # the device-level series is not counted


def test_gpu_states_of_a_carved_gpu_add_up_to_one() -> None:
    model = "NVIDIA H100 80GB HBM3"
    text = instance(model, 1, "3g.40gb", pod="train", use=0.8) + instance(
        model, 2, "3g.40gb", pod="nb", use=0.01
    )
    attributor = Attributor(
        Config.model_validate({"teams": [{"name": "a", "namespaces": ["ns-a"]}]})
    )
    snapshot = DcgmSnapshot(tuple(parse_metrics(text)))
    got = {
        (dict(s.labels)["team"], dict(s.labels)["state"]): s.value
        for s in gpu_samples(team_gpus(snapshot, attributor, 0.05, lambda _: 2.0))
        if s.family.base == "gpus"
    }
    # One 3g.40gb busy (0.8), one idle (0.01 < 0.05), and the seventh slice held by nobody.
    assert got[("a", "busy")] == 3 / 7
    assert got[("a", "idle")] == 3 / 7
    assert got[(UNALLOCATED, "unallocated")] == 1 / 7
    assert math.fsum(got.values()) == pytest.approx(1.0, abs=1e-12)


def test_time_sliced_instance_is_split_and_the_rest_is_kept() -> None:
    model = "NVIDIA A100 80GB PCIe"
    text = instance(model, 3, "3g.40gb", pod="a") + instance(model, 3, "3g.40gb", pod="b")
    records = parse_metrics(text)
    shares = sorted((r.pod, r.share) for r in records)
    assert shares == [("", 4 / 7), ("a", 3 / 14), ("b", 3 / 14)]
    assert gpu_total(records) == pytest.approx(1.0, abs=1e-12)


def test_a_gpu_whose_instances_claim_too_many_slices_is_dropped_and_fails_the_read() -> None:
    text = (
        instance("NVIDIA A30", 1, "2g.12gb", pod="x")
        + instance("NVIDIA A30", 2, "2g.12gb")
        + instance("NVIDIA A30", 3, "1g.6gb")
        + instance("NVIDIA A30", 1, "4g.24gb", gpu=1, pod="y")
    )
    # 2 + 2 + 1 = 5 slices on a 4-slice A30: that GPU's data is inconsistent, and counting the
    # node without it would show one GPU fewer than it has.
    with pytest.raises(RecordsDropped, match="5/4 slices") as caught:
        parse_metrics(text, tally=Tally())
    assert caught.value.dropped == {OUT_OF_RANGE: 1}


@pytest.mark.parametrize(
    ("profile", "model"),
    [("3g.12gb", "NVIDIA A30"), ("5g.50gb", "NVIDIA A100 80GB PCIe"), ("6g.70gb", "H100")],
)
def test_profile_sizes_that_do_not_exist_on_the_gpu_are_refused(profile: str, model: str) -> None:
    with pytest.raises(ValueError, match="does not fit"):
        mig_share(profile, model)


def test_the_same_carved_gpu_behind_two_urls_counts_once_with_its_rest() -> None:
    model = "NVIDIA H100 80GB HBM3"
    body = instance(model, 1, "3g.40gb", pod="p")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=body)

    cfg = DcgmConfig(urls=("http://node-7:9400/metrics", "http://dcgm.svc:9400/metrics"))
    with build_client(cfg, transport=httpx.MockTransport(handler)) as client:
        snapshot = KIND.fetch_from_config(
            client,
            Config(sources=SourcesConfig(dcgm=cfg)),
            Reading.open(FIXED_NOW, UTC_ZONE),
        )
    assert sorted((r.mig_instance, r.share) for r in snapshot.gpus) == [
        ("1", 3 / 7),
        (UNSLICED, 4 / 7),
    ]

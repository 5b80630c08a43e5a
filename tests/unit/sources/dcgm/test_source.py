"""The DCGM source: parsing dcgm-exporter text into GPU records, fetched over mock transports."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from exporter.config.schema import Config, DcgmConfig, SourcesConfig
from exporter.errors import (
    RecordsDropped,
    UpstreamIncomplete,
    UpstreamPayloadError,
    UpstreamStatusError,
    UpstreamUnavailable,
)
from exporter.sources.dcgm.source import KIND as DCGM_KIND
from exporter.sources.dcgm.source import (
    DcgmSnapshot,
    GpuRecord,
    build_client,
    mig_share,
    parse_metrics,
)
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW

FIXTURES = Path(__file__).parents[3] / "fixtures" / "dcgm"
H100 = 'modelName="NVIDIA H100 80GB HBM3"'


def fetch(client: httpx.Client, cfg: DcgmConfig) -> DcgmSnapshot:
    """The source's fetch with a config holding only this section (DCGM has no window)."""
    config = Config(sources=SourcesConfig(dcgm=cfg))
    return DCGM_KIND.fetch_from_config(client, config, Reading.open(FIXED_NOW, config.zone))


def series(name: str, value: str, extra: str = "", gpu: int = 0, host: str = "n1") -> str:
    labels = f'gpu="{gpu}",UUID="GPU-{gpu}",device="nvidia{gpu}",{H100},Hostname="{host}"'
    return f"{name}{{{labels}{extra}}} {value}\n"


def by_slot(records: list[GpuRecord]) -> dict[tuple[str, str], GpuRecord]:
    return {(r.gpu, r.mig_instance): r for r in records}


# --- the hand-computed scenario ------------------------------------------------------------


def test_mig_slices_idle_gpu_and_engine_activity_from_fixture() -> None:
    records = parse_metrics((FIXTURES / "mig_and_idle.txt").read_text(), where="fixture")
    got = by_slot(records)
    # GPU 0 is in MIG mode: only its three instances count, its device-level series does not.
    assert set(got) == {("0", "1"), ("0", "2"), ("0", "9"), ("1", ""), ("2", "")}
    small, big_busy, big_free = got[("0", "9")], got[("0", "1")], got[("0", "2")]
    assert small.share == pytest.approx(1 / 7)  # a 1g.10gb slice
    assert big_busy.share == pytest.approx(3 / 7) and big_free.share == pytest.approx(3 / 7)
    assert (small.namespace, small.pod, small.container) == ("ns-a", "nb-0", "nb")
    assert small.labels == {"app": "notebook"}
    assert big_busy.labels == {"team": "b"} and big_busy.utilisation == pytest.approx(0.02)
    assert not big_free.allocated and big_free.utilisation == 0.0
    # The unlabelled H100 is unallocated and idle.
    idle = got[("1", "")]
    assert not idle.allocated and idle.pod == "" and idle.utilisation == 0.0
    # Engine activity (0.9) wins over GPU_UTIL (87 %), and XID's err_* labels are not pod labels.
    busy = got[("2", "")]
    assert busy.utilisation == pytest.approx(0.9)
    assert busy.labels == {}
    assert busy.node == "gpu-node-2" and busy.uuid.startswith("GPU-5f1c2b8e")


def test_gpu_util_percent_is_the_fallback_and_is_a_ratio() -> None:
    text = series("DCGM_FI_DEV_GPU_UTIL", "42", ',namespace="ns",pod="p"')
    (record,) = parse_metrics(text)
    assert record.utilisation == pytest.approx(0.42)


def test_no_utilisation_at_all_is_none() -> None:
    (record,) = parse_metrics(series("DCGM_FI_DEV_FB_USED", "100"))
    assert record.utilisation is None


def test_blank_sentinels_of_old_exporters_are_absent_values() -> None:
    text = series("DCGM_FI_DEV_GPU_UTIL", "9223372036854775794") + series(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "140737488355328.000000"
    )
    (record,) = parse_metrics(text)
    assert record.utilisation is None


@pytest.mark.parametrize(
    "variant",
    [
        ',container="c",namespace="ns",pod="p"',
        ',exported_container="c",exported_namespace="ns",exported_pod="p",namespace="x",pod="y"',
        ',container_name="c",pod_name="p",pod_namespace="ns"',
    ],
)
def test_pod_label_spellings(variant: str) -> None:
    (record,) = parse_metrics(series("DCGM_FI_DEV_GPU_UTIL", "1", variant))
    assert (record.namespace, record.pod, record.container) == ("ns", "p", "c")


def test_lowercase_hostname_and_uuid() -> None:
    text = 'DCGM_FI_DEV_GPU_UTIL{gpu="3",uuid="GPU-x",modelName="m",hostname="node-b"} 5\n'
    (record,) = parse_metrics(text)
    assert (record.node, record.uuid, record.gpu) == ("node-b", "GPU-x", "3")


def test_empty_pod_labels_mean_unallocated() -> None:
    text = series("DCGM_FI_DEV_GPU_UTIL", "0", ',container="",namespace="",pod=""')
    (record,) = parse_metrics(text)
    assert not record.allocated


def test_no_hostname_falls_back_to_the_endpoint_host() -> None:
    text = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-0",modelName="m"} 5\n'
    (record,) = parse_metrics(text, default_node="10.0.0.7")
    assert record.node == "10.0.0.7"


def test_time_sliced_gpu_is_split_between_its_pods() -> None:
    text = series("DCGM_FI_DEV_GPU_UTIL", "50", ',namespace="a",pod="p1"') + series(
        "DCGM_FI_DEV_GPU_UTIL", "50", ',namespace="b",pod="p2"'
    )
    records = parse_metrics(text)
    assert [r.share for r in records] == [0.5, 0.5]


@pytest.mark.parametrize(
    ("profile", "model", "share"),
    [
        ("1g.10gb", "NVIDIA H100 80GB HBM3", 1 / 7),
        ("3g.40gb", "NVIDIA A100 80GB PCIe", 3 / 7),
        ("7g.80gb", "NVIDIA H100 80GB HBM3", 1.0),
        ("1g.10gb+me", "NVIDIA A100-SXM4-80GB", 1 / 7),
        ("1c.3g.40gb", "NVIDIA A100 80GB PCIe", 3 / 7),
        ("2g.12gb", "NVIDIA A30", 2 / 4),
    ],
)
def test_mig_share_rule(profile: str, model: str, share: float) -> None:
    assert mig_share(profile, model) == pytest.approx(share)


@pytest.mark.parametrize(("profile", "model"), [("big", "x"), ("8g.90gb", "H100"), ("0g.1gb", "x")])
def test_mig_share_rejects_unknown_profiles(profile: str, model: str) -> None:
    with pytest.raises(ValueError, match="MIG profile"):
        mig_share(profile, model)


@pytest.mark.parametrize(
    "text",
    [
        "this is { not prometheus",
        "# HELP x\nsome_other_metric 1\n",
        series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.1", ',GPU_I_PROFILE="huge",GPU_I_ID="1"'),
    ],
)
def test_bad_payloads_raise_payload_errors(text: str) -> None:
    with pytest.raises(UpstreamPayloadError):
        parse_metrics(text, where="http://n1:9400/metrics")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "1.5"), "out_of_range"),
        (series("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "NaN"), "non_finite"),
        (series("DCGM_FI_DEV_GPU_UTIL", "150"), "out_of_range"),
        (series("DCGM_FI_DEV_GPU_UTIL", "-1"), "out_of_range"),
    ],
)
def test_an_endpoint_whose_every_sample_is_corrupt_keeps_its_gpus_their_use_unknown(
    text: str, reason: str
) -> None:
    # One node's exporter this broken is its GPUs' use unknown, not the whole source down.
    (record,) = parse_metrics(text, where="http://n1:9400/metrics")
    assert (record.gpu, record.utilisation, record.corrupt) == ("0", None, reason)


# --- fetch over MockTransport --------------------------------------------------------------


def mock_client(cfg: DcgmConfig, answer: Callable[[httpx.Request], httpx.Response]) -> httpx.Client:
    return build_client(cfg, transport=httpx.MockTransport(answer))


def test_fetch_joins_every_endpoint() -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics", "http://n2:9400/metrics"))
    bodies = {
        "n1": series("DCGM_FI_DEV_GPU_UTIL", "10", host="n1"),
        "n2": series("DCGM_FI_DEV_GPU_UTIL", "20", host="n2"),
    }

    def answer(request: httpx.Request) -> httpx.Response:
        assert request.headers["user-agent"].startswith("gpu-chargeback-exporter/")
        return httpx.Response(200, text=bodies[request.url.host])

    with mock_client(cfg, answer) as client:
        snapshot = fetch(client, cfg)
    assert [(r.node, r.utilisation) for r in snapshot.gpus] == [("n1", 0.1), ("n2", 0.2)]


def test_the_same_gpu_behind_two_urls_counts_once() -> None:
    cfg = DcgmConfig(urls=("http://svc:9400/metrics", "http://pod:9400/metrics"))
    body = series("DCGM_FI_DEV_GPU_UTIL", "10", host="n1")
    with mock_client(cfg, lambda _: httpx.Response(200, text=body)) as client:
        assert len(fetch(client, cfg).gpus) == 1


def test_one_failing_endpoint_fails_the_whole_refresh() -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics", "http://n2:9400/metrics"))

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.host == "n2":
            return httpx.Response(503, text="busy")
        return httpx.Response(200, text=series("DCGM_FI_DEV_GPU_UTIL", "1"))

    with mock_client(cfg, answer) as client, pytest.raises(UpstreamStatusError) as caught:
        fetch(client, cfg)
    assert caught.value.status == 503


def test_unreachable_endpoint_is_unavailable() -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics",))

    def answer(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with mock_client(cfg, answer) as client, pytest.raises(UpstreamUnavailable):
        fetch(client, cfg)


# --- a corrupt sample is a corrupt sample; a GPU that cannot be read fails the read ---------


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        # DCGM writes a uint32 -1 where it has no utilisation; it is below the 2**47 floor.
        (series("DCGM_FI_DEV_GPU_UTIL", "4294967295", gpu=1), "out_of_range"),
        (series("DCGM_FI_DEV_GPU_UTIL", "NaN", gpu=1), "non_finite"),
    ],
)
def test_a_corrupt_sample_leaves_its_gpu_counted_and_its_use_unknown(bad: str, reason: str) -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics", "http://n2:9400/metrics"))
    bodies = {
        "n1": series("DCGM_FI_DEV_GPU_UTIL", "40", gpu=0) + bad + series("X_OTHER", "1"),
        "n2": series("DCGM_FI_DEV_GPU_UTIL", "20", host="n2"),
    }
    with mock_client(cfg, lambda r: httpx.Response(200, text=bodies[r.url.host])) as client:
        snapshot = fetch(client, cfg)
    assert [(r.node, r.gpu, r.utilisation, r.corrupt) for r in snapshot.gpus] == [
        ("n1", "0", 0.4, ""),
        ("n1", "1", None, reason),
        ("n2", "0", 0.2, ""),
    ]
    assert snapshot.dropped == {reason: 1}


def test_a_corrupt_sample_takes_the_last_good_value_while_it_is_fresh() -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics",), max_staleness=timedelta(minutes=2))
    body = [series("DCGM_FI_DEV_GPU_UTIL", "30") + series("DCGM_FI_DEV_GPU_UTIL", "50", gpu=1)]
    config = Config(sources=SourcesConfig(dcgm=cfg))

    def read(minutes: int) -> DcgmSnapshot:
        now = FIXED_NOW + timedelta(minutes=minutes)
        return DCGM_KIND.fetch_from_config(client, config, Reading.open(now, config.zone))

    with mock_client(cfg, lambda r: httpx.Response(200, text=body[0])) as client:
        assert [r.utilisation for r in read(0).gpus] == [0.3, 0.5]
        body[0] = body[0].replace("} 30", "} 4294967295")
        # Within max_staleness of the good read: its figures stay what they were.
        again = read(1).gpus
        assert [(r.utilisation, r.corrupt) for r in again] == [(0.3, "out_of_range"), (0.5, "")]
        # Past it, that value is too old to stand in: the GPU's use is unknown.
        assert [r.utilisation for r in read(4).gpus] == [None, 0.5]


def test_a_read_without_one_usable_sample_fails() -> None:
    cfg = DcgmConfig(urls=("http://n1:9400/metrics",))
    body = series("DCGM_FI_DEV_GPU_UTIL", "NaN") + series("DCGM_FI_DEV_GPU_UTIL", "-3", gpu=1)
    with (
        mock_client(cfg, lambda r: httpx.Response(200, text=body)) as client,
        pytest.raises(RecordsDropped, match="every utilisation sample was corrupt") as caught,
    ):
        fetch(client, cfg)
    assert caught.value.dropped == {"non_finite": 1, "out_of_range": 1}


def test_a_gpu_that_cannot_be_read_is_dropped_and_fails_the_read() -> None:
    # Left out, its node would count a GPU fewer than it has, with the source up.
    cfg = DcgmConfig(urls=("http://n1:9400/metrics",))
    blank = ',GPU_I_PROFILE="<<<NULL>>>",GPU_I_ID="3"'
    body = series("DCGM_FI_DEV_GPU_UTIL", "40") + series("DCGM_FI_DEV_GPU_UTIL", "5", blank, 1)
    with (
        mock_client(cfg, lambda r: httpx.Response(200, text=body)) as client,
        pytest.raises(RecordsDropped, match="GPUs dropped: 1") as caught,
    ):
        fetch(client, cfg)
    assert caught.value.dropped == {"missing_field": 1} and caught.value.reason == "malformed"


def test_the_same_gpu_twice_is_counted_as_a_duplicate() -> None:
    cfg = DcgmConfig(urls=("http://svc:9400/metrics", "http://pod:9400/metrics"))
    bodies = {  # two scrapes of one exporter, moments apart: utilisation may differ
        "svc": series("DCGM_FI_DEV_GPU_UTIL", "10"),
        "pod": series("DCGM_FI_DEV_GPU_UTIL", "12"),
    }
    with mock_client(cfg, lambda r: httpx.Response(200, text=bodies[r.url.host])) as client:
        snapshot = fetch(client, cfg)
    assert [r.utilisation for r in snapshot.gpus] == [0.1]
    assert snapshot.dropped == {"duplicate": 1}


def test_the_same_gpu_described_two_ways_fails_the_refresh() -> None:
    cfg = DcgmConfig(urls=("http://svc:9400/metrics", "http://pod:9400/metrics"))
    other = 'modelName="NVIDIA A30"'
    bodies = {
        "svc": series("DCGM_FI_DEV_GPU_UTIL", "10"),
        "pod": series("DCGM_FI_DEV_GPU_UTIL", "10").replace(H100, other),
    }
    with (
        mock_client(cfg, lambda r: httpx.Response(200, text=bodies[r.url.host])) as client,
        pytest.raises(UpstreamIncomplete, match="different values"),
    ):
        fetch(client, cfg)

"""Advice from a window of history: the savings worked by hand, and no advice on bad history."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.config.advice import AdviceConfig
from exporter.ledger.advice import Advice, AdviceSet, Prices, advise
from exporter.ledger.advice.advise import HOURS_A_MONTH
from exporter.sources.dcgm_history.records import DeviceHistory, History, QueueHistory, Spread

WEEK = 7 * 86_400.0
STEP = 300.0
FULL = int(WEEK / STEP)  # samples of a series seen the whole week
H100 = "NVIDIA H100 80GB HBM3"
PRICES = Prices(
    model=lambda m: 1.40 if "H100" in m else None,
    flavor=lambda f: 1.40 if f == "h100" else None,
)
CFG = AdviceConfig()
VLLM_FB = Spread(7_000, 7_200, 7_500, FULL)  # MiB
VLLM_ACT = Spread(0.02, 0.02, 0.02, FULL)


def device(
    pod: str = "vllm-llama",
    *,
    fb: Spread | None = VLLM_FB,
    act: Spread | None = VLLM_ACT,
    idle: float | None = 0.0,
    profile: str = "",
    model: str = H100,
    resets: int = 0,
) -> DeviceHistory:
    return DeviceHistory(
        "ns-search", pod, "vllm", "gpu-node-1", "3", "GPU-3", model, profile,
        (("team", "search"),), fb, act, idle, resets,
    )  # fmt: skip


def run(
    *devices: DeviceHistory, queues: tuple[QueueHistory, ...] = (), charges: bool = True
) -> AdviceSet:
    history = History(WEEK, STEP, devices, queues)
    return advise(
        history,
        CFG,
        team_of=lambda d: d.labels.get("team", "__unallocated__"),
        queue_team=lambda q: q.removeprefix("cq-"),
        prices=PRICES,
        charges_quota=charges,
    )


def only(result: AdviceSet, kind: str) -> Advice:
    (item,) = [a for a in result.advice if a.kind == kind]
    return item


def test_a_whole_h100_at_two_percent_fits_1g_10gb() -> None:
    item = only(run(device()), "mig")
    assert (item.team, item.workload, item.action) == (
        "search",
        "ns-search/vllm-llama",
        "fits 1g.10gb",
    )
    # (1 - 1/7) x 730 h x 1.40 a GPU-hour
    assert item.saving == pytest.approx(876.0)
    assert item.coverage == pytest.approx(FULL * STEP / WEEK)
    assert item.samples == FULL


def test_a_gpu_idle_most_of_the_window_is_advised_released() -> None:
    item = only(run(device(idle=0.9)), "idle")
    assert item.action == "release the GPU"
    assert item.saving == pytest.approx(HOURS_A_MONTH * 1.40)
    mig = only(run(device(idle=0.9, profile="3g.40gb")), "idle")
    assert mig.action == "release the MIG instance"
    assert mig.saving == pytest.approx(3 / 7 * HOURS_A_MONTH * 1.40)


def test_half_the_week_seen_saves_half() -> None:
    half = Spread(7_000, 7_200, 7_500, FULL // 2)
    item = only(run(device(fb=half, act=Spread(0.02, 0.02, 0.02, FULL // 2))), "mig")
    assert item.saving == pytest.approx(438.0)


def test_a_queue_at_35_percent_of_nominal_gives_back_two() -> None:
    queue = QueueHistory("cq-search", "h100", "nvidia.com/gpu", 4.0, Spread(1.0, 1.4, 1.4, FULL))
    item = only(run(queues=(queue,)), "quota")
    # Keep ceil(1.4 / 0.8) = 2 of 4: give back 2 x 730 h x 1.40.
    assert (item.team, item.action) == ("search", "give back 2 GPUs")
    assert item.saving == pytest.approx(2044.0)
    freed = only(run(queues=(queue,), charges=False), "quota")
    assert (freed.action, freed.saving, freed.gpus) == ("frees 2 GPUs", 0.0, 2.0)


def test_a_queue_well_used_or_not_gpus_gets_nothing() -> None:
    busy = QueueHistory("cq-a", "h100", "nvidia.com/gpu", 4.0, Spread(2, 2.5, 2.5, FULL))
    cpu = QueueHistory("cq-b", "h100", "cpu", 64.0, Spread(1, 1, 1, FULL))
    one = QueueHistory("cq-c", "h100", "nvidia.com/gpu", 1.0, Spread(0.1, 0.1, 0.1, FULL))
    assert run(queues=(busy, cpu, one)).advice == ()


@pytest.mark.parametrize(
    ("dev", "reason"),
    [
        (device(fb=Spread(7_000, 7_200, 7_500, 12)), "thin_history"),  # one hour
        (device(act=None), "thin_history"),
        (device(fb=Spread(math.nan, 7_200, 7_500, FULL)), "not_finite"),
        (device(idle=math.nan), "not_finite"),
        (device(resets=1), "gpu_reset"),
        (device(fb=Spread(7_000, 7_600, 7_500, FULL)), "inconsistent"),
        (device(act=Spread(0.02, 0.02, 0.02, FULL * 2)), "inconsistent"),
        (device(act=Spread(0.5, 1.0, 1.5, FULL)), "inconsistent"),
        (device(fb=Spread(1, 2, 200_000, FULL)), "inconsistent"),
        (device(model="NVIDIA L40S"), "no_price"),
    ],
)
def test_bad_or_thin_history_gives_no_advice_and_says_why(dev: DeviceHistory, reason: str) -> None:
    result = run(dev)
    assert result.advice == ()
    assert result.reasons() == {reason: 1}
    assert result.withheld[0].workload == "ns-search/vllm-llama"


def test_top_keeps_the_largest_savings_of_each_team() -> None:
    devices = [device(f"p{i}", fb=Spread(1, 1, 1000 * (i + 1), FULL)) for i in range(8)]
    result = run(*devices)
    assert len(result.advice) == 8
    top = result.top(5)
    assert len(top) == 5
    assert [a.saving for a in top] == sorted((a.saving for a in top), reverse=True)


def _spread(a: float, b: float, c: float, n: int) -> Spread:
    low, mid, high = sorted((a, b, c))
    return Spread(low, mid, high, n)


spreads = st.builds(
    _spread,
    st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.integers(1, FULL),
)  # fmt: skip


@given(
    act=spreads,
    fb_max=st.floats(0, 80_000),
    idle=st.floats(0, 1),
    profile=st.sampled_from(["", "1g.10gb", "3g.40gb"]),
)
def test_a_saving_never_exceeds_what_the_device_costs_a_month(
    act: Spread, fb_max: float, idle: float, profile: str
) -> None:
    fb = Spread(fb_max / 2, fb_max, fb_max, act.samples)
    result = run(device(fb=fb, act=act, idle=idle, profile=profile))
    cost = HOURS_A_MONTH * 1.40 * act.samples * STEP / WEEK
    for item in result.advice:
        assert 0 < item.saving <= cost + 1e-9
        assert item.framebuffer is fb
    if act.samples * STEP < CFG.min_coverage.total_seconds():
        assert result.advice == ()
        assert result.reasons() == {"thin_history": 1}


@given(
    nominal=st.integers(1, 64),
    peak=st.floats(0, 64),
    samples=st.integers(1, FULL),
    charges=st.booleans(),
)
def test_quota_advice_never_gives_back_what_the_peak_needs(
    nominal: int, peak: float, samples: int, charges: bool
) -> None:
    queue = QueueHistory(
        "cq-x", "h100", "nvidia.com/gpu", float(nominal), Spread(peak, peak, peak, samples)
    )
    result = run(queues=(queue,), charges=charges)
    for item in result.advice:
        assert nominal - item.gpus >= peak / CFG.headroom - 1e-9
        assert peak <= CFG.quota_share * nominal
        assert item.saving == (pytest.approx(item.gpus * HOURS_A_MONTH * 1.40) if charges else 0.0)


def test_advice_is_independent_of_the_order_records_come_in() -> None:
    devices = [device(f"p{i}", fb=Spread(1, 1, 1000 * (i + 1), FULL), idle=i / 8) for i in range(8)]
    assert run(*devices) == run(*reversed(devices))


def test_a_mig_instance_without_framebuffer_series_is_still_judged_on_activity() -> None:
    # dcgm-exporter leaves DCGM_FI_DEV_FB_* out for MIG instances on some drivers (#512).
    item = only(run(device(fb=None, idle=0.95, profile="1g.10gb")), "idle")
    assert item.framebuffer is None
    assert item.saving == pytest.approx(HOURS_A_MONTH * 1.40 / 7)
    assert run(device(fb=None)).reasons() == {"thin_history": 1}

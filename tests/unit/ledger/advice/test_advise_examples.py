"""docs/advice.md's worked examples, run through the code: each figure the page states."""

from __future__ import annotations

from pathlib import Path

import pytest

from exporter.config.advice import AdviceConfig
from exporter.ledger.advice import Prices, advise
from exporter.sources.dcgm_history.records import DeviceHistory, History, QueueHistory, Spread

PAGE = (Path(__file__).parents[4] / "docs" / "advice.md").read_text(encoding="utf-8")
WEEK, STEP, FULL = 7 * 86_400.0, 300.0, 2016
PRICES = Prices(model=lambda m: 1.40, flavor=lambda f: 1.40)


def _run(
    *devices: DeviceHistory, queues: tuple[QueueHistory, ...] = (), charges: bool = True
) -> list[str]:
    result = advise(
        History(WEEK, STEP, devices, queues),
        AdviceConfig(),
        team_of=lambda d: "search",
        queue_team=lambda q: "search",
        prices=PRICES,
        charges_quota=charges,
    )
    said = [f"{a.action}: saves {a.saving:,.2f}" for a in result.advice]
    said += [f"{w.reason} ({w.detail})" for w in result.withheld]
    return said


def _vllm(samples: int = FULL, fb_peak: float = 19_100) -> DeviceHistory:
    fb = Spread(fb_peak - 200, fb_peak - 50, fb_peak, samples)
    activity = Spread(0.02, 0.021, 0.022, samples)
    return DeviceHistory(
        "ns-search", "vllm-llama", "vllm", "gpu-node-1", "3", "GPU-3", "NVIDIA H100 80GB HBM3", "",
        (("team", "search"),), fb, activity, 1.0,
    )  # fmt: skip


def test_the_demo_vllm_fits_3g_40gb() -> None:
    said = _run(_vllm())
    assert said == ["release the GPU: saves 1,022.00", "fits 3g.40gb: saves 584.00"]
    assert '"fits 3g.40gb: saves 584.00"' in PAGE
    assert '"release the GPU: saves 1,022.00"' in PAGE


def test_a_smaller_vllm_fits_1g_10gb() -> None:
    said = _run(_vllm(fb_peak=7_500))
    assert said[1] == "fits 1g.10gb: saves 876.00"
    assert f'"{said[1]}"' in PAGE


@pytest.mark.parametrize(
    ("charges", "line"), [(True, "give back 2 GPUs: saves 2,044.00"), (False, "frees 2 GPUs")]
)
def test_a_queue_at_35_percent_gives_back_two(charges: bool, line: str) -> None:
    queue = QueueHistory("cq-search", "h100", "nvidia.com/gpu", 4.0, Spread(1.0, 1.4, 1.4, FULL))
    (said,) = _run(queues=(queue,), charges=charges)
    assert said.startswith(line)
    assert line in PAGE


def test_a_gpu_seen_one_hour_gets_none() -> None:
    (said,) = _run(_vllm(samples=12))
    assert said == "thin_history (1.0 h observed, advice needs 24 h)"
    assert '"1.0 h observed, advice needs 24 h"' in PAGE

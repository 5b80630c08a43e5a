"""Completion weights measured through a real Prometheus holding backfilled vLLM histograms."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from chargeback_demo.stack import DemoStack, demo_config_dict
from exporter.calendar import Month
from exporter.cli import main
from exporter.config.schema import Config
from exporter.ledger.llm.weights import TOO_FEW_REQUESTS, completion_weights
from exporter.sources.reading import Reading
from exporter.sources.vllm.source import KIND, build_client
from tests.conftest import CLOCK
from tests.support.backfill import backfilled_prometheus

pytestmark = pytest.mark.skipif(shutil.which("promtool") is None, reason="needs promtool")

LLAMA, TINY = "meta-llama/Llama-3.1-70B-Instruct", "tiny-1b"
START, END = datetime(2026, 10, 1, tzinfo=UTC), datetime(2026, 11, 1, tzinfo=UTC)
RESTART = datetime(2026, 10, 15, 12, tzinfo=UTC)  # replica b restarts: its counters reset
STEP = timedelta(minutes=30)
Step = tuple[float, float, int, int, int]
# What each replica's finished requests add every step: (prefill s, decode s, prompt tokens,
# completion tokens, requests). October: a prefills 6,000 tokens in 0.6 s and decodes 2,400 in
# 12 s; b prefills 3,000 in 0.9 s and decodes 1,200 in 6 s. Over both, a prompt token took
# 1.5 / 9,000 s and a completion token 18 / 3,600 s: w = 0.005 / 0.000166... = 30 (not the
# mean of the replicas' own 50 and 16.7: the weight is of the model's time, not its pods').
OCTOBER: dict[str, Step] = {"a": (0.6, 12.0, 6000, 2400, 10), "b": (0.9, 6.0, 3000, 1200, 5)}
# November, on both replicas: 0.1 ms a prompt token, 1 ms a completion token: w = 10.
NOVEMBER: Step = (0.6, 2.4, 6000, 2400, 10)
HISTOGRAMS = (
    "vllm:request_prefill_time_seconds",
    "vllm:request_decode_time_seconds",
    "vllm:request_prompt_tokens",
    "vllm:request_generation_tokens",
)


NOTHING: Step = (0.0, 0.0, 0, 0, 0)


def _replica(october: Step) -> Callable[[datetime], Step]:
    return lambda t: october if t <= END else NOVEMBER


def _tiny(t: datetime) -> Step:
    # A small model with one request every 12 hours: 62 in October, under min_requests.
    return (0.01, 0.1, 100, 10, 1) if t.hour % 12 == 0 and t.minute == 0 else NOTHING


def _series(index: int, pod: str, model: str, per_step: Callable[[datetime], Step]) -> list[str]:
    """One replica's histogram HISTOGRAMS[index] every STEP up to 2 November, as vLLM exposes
    it: buckets, count and sum; the count is its requests (each histogram observes each once)."""
    family, labels = HISTOGRAMS[index], f'engine="0",model_name="{model}",pod="{pod}"'
    out: list[str] = []
    total, count, t = 0.0, 0, START
    while t <= END + timedelta(days=1):
        if t > START:
            if pod == "b" and t - STEP < RESTART <= t:
                total, count = 0.0, 0  # a restart: the step's requests land in a new process
            step = per_step(t)
            total, count = total + step[index], count + step[4]
        stamp = int(t.timestamp())
        out += [
            f'{family}_bucket{{{labels},le="+Inf"}} {count} {stamp}',
            f"{family}_count{{{labels}}} {count} {stamp}",
            f"{family}_sum{{{labels}}} {total:.6f} {stamp}",
        ]
        t += STEP
    return out


def _openmetrics() -> str:
    lines: list[str] = []
    for index, family in enumerate(HISTOGRAMS):
        lines.append(f"# TYPE {family} histogram")
        for pod, october in OCTOBER.items():
            lines += _series(index, pod, LLAMA, _replica(october))
        lines += _series(index, "c", TINY, _tiny)
    return "\n".join([*lines, "# EOF", ""])


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Prometheus whose only data is a backfilled October and 1 November of vLLM series."""
    with backfilled_prometheus(tmp_path_factory.mktemp("vllm"), _openmetrics()) as url:
        yield url


def _config(url: str, **vllm: Any) -> Config:
    hosted = {"namespace": "ns-serve", "weight": "measured"}
    return Config.model_validate(
        {
            "llm_completion_weight": 3,
            "llm_models": [
                {"model": "llama-70b", "self_hosted": {**hosted, "served_model": LLAMA}},
                {"model": TINY, "self_hosted": hosted},
            ],
            "sources": {"vllm": {"url": url, **vllm}},
        }
    )


def _weights(config: Config, reading: Reading) -> dict[str, tuple[float, str | None]]:
    assert config.sources.vllm is not None
    with build_client(config.sources.vllm) as client:
        snapshot = KIND.fetch_from_config(client, config, reading)
    assert snapshot.dropped == {}
    return {w.model: (w.applied, w.fallback) for w in completion_weights(config, snapshot)}


def test_the_closed_month_gives_the_hand_worked_weight(prometheus: str) -> None:
    config = _config(prometheus)
    october = Month.of(START, config.zone)
    got = _weights(config, Reading.closed_month(october))
    assert got["llama-70b"][0] == pytest.approx(30.0, rel=1e-9)
    assert got["llama-70b"][1] is None
    # Too few requests to measure anything: the configured weight, and why.
    assert got[TINY] == (3.0, TOO_FEW_REQUESTS)


def test_a_window_reads_its_own_span(prometheus: str) -> None:
    config = _config(prometheus, window="1d")
    reading = Reading.open(END + timedelta(days=1), config.zone)
    assert _weights(config, reading)["llama-70b"][0] == pytest.approx(10.0, rel=1e-9)


def _report(stack: DemoStack, tmp_path: Path, vllm: str | None, capsys: Any) -> Any:
    data = demo_config_dict(stack.urls, str(stack.secrets))
    hosted = data["llm_models"][0]["self_hosted"]
    # The demo's own vLLM (its fake Prometheus) is replaced: by none, or by the backfilled one.
    data["sources"].pop("vllm", None)
    hosted.pop("weight", None)
    if vllm is not None:
        data["sources"]["vllm"] = {"url": vllm}
        hosted.update({"weight": "measured", "served_model": LLAMA})
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    argv = ["report", "--config.file", str(path), "--format", "json", "--month", "2026-10"]
    assert main(argv, CLOCK) == 0
    return json.loads(capsys.readouterr().out)


def test_the_report_moves_the_same_money_by_the_measured_weight(
    prometheus: str, stack: DemoStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured = _report(stack, tmp_path, None, capsys)
    measured = _report(stack, tmp_path, prometheus, capsys)

    def serving(report: Any) -> dict[str, float]:
        return {t["team"]: float(t["components"].get("llm_serving", 0.0)) for t in report["teams"]}

    assert measured["total"] == configured["total"]
    assert sum(serving(measured).values()) == pytest.approx(0.0, abs=0.02)
    # w = 30 rather than 3: completion-heavy teams take more of the serving cost.
    assert serving(measured) != serving(configured)
    # The closed month's report reads October's vLLM series and says so, hand-worked: 1.5 s
    # for 9,000 prompt tokens (0.1667 ms) and 18 s for 3,600 completion tokens (5 ms) a step.
    (weight,) = measured["llm_completion_weights"]
    assert (weight["model"], weight["basis"], weight["fallback_reason"]) == (
        "llama-3-70b",
        "measured",
        None,
    )
    assert weight["measured"] == weight["applied"] == pytest.approx(30.0, abs=1e-6)
    # To the digits the tables print: milliseconds to three decimals.
    assert weight["prefill_ms_per_prompt_token"] == 0.167
    assert weight["decode_ms_per_completion_token"] == pytest.approx(5.0, abs=1e-6)
    (plain,) = configured["llm_completion_weights"]
    assert (plain["applied"], plain["measured"], plain["asked"]) == (3.0, None, "configured")

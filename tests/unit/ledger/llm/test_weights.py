"""Completion weights measured from vLLM: a hand-worked weight, every fallback, and money kept."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import Config
from exporter.exposition.samples import Sample
from exporter.exposition.series import series
from exporter.exposition.series.llm import weight_samples
from exporter.finance.report.weights import REASONS
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.join import join
from exporter.ledger.llm import apply_llm
from exporter.ledger.llm.weights import (
    FALLBACK_REASONS,
    IMPLAUSIBLE,
    INVALID,
    INVERTED_PHASES,
    NO_DATA,
    SOURCE_DOWN,
    TOO_FEW_REQUESTS,
    TOO_FEW_TOKENS,
    applied_weights,
    completion_weights,
)
from exporter.sources.litellm.snapshot import ModelUsage
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from exporter.sources.vllm.records import ModelTiming, VllmSnapshot
from tests.support.properties import examples

# Hand-worked: 60 s of prefill for 600,000 prompt tokens is 0.1 ms a prompt token; 1,200 s of
# decode for 240,000 completion tokens is 5 ms a completion token; w = 5 / 0.1 = 50.
LLAMA = ModelTiming("meta-llama/Llama-3.1-70B", 60.0, 1200.0, 600_000.0, 240_000.0, 1000.0)


def _config(
    weight: str = "measured", vllm: bool = True, source: dict[str, Any] | None = None, **extra: Any
) -> Config:
    hosted = {"namespace": "ns-serve", "weight": weight, "served_model": LLAMA.model}
    data: dict[str, Any] = {
        "llm_completion_weight": 3,
        "llm_models": [
            {"model": "llama-70b", "self_hosted": hosted},
            {"model": "mistral-7b", "self_hosted": {"namespace": "ns-serve"}},
            {"model": "gpt-4o", "external": True},
        ],
        **extra,
    }
    if vllm:
        vllm_source = {"url": "http://prom.invalid:9090", "min_requests": 100, **(source or {})}
        data["sources"] = {"vllm": vllm_source}
    return Config.model_validate(data)


def _values(samples: list[Sample]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.family.base, s.labels): s.value for s in samples}


def _snapshot(*models: ModelTiming) -> VllmSnapshot:
    return VllmSnapshot(models, 86400.0)


def test_the_hand_worked_weight_is_measured_exported_and_applied() -> None:
    weights = completion_weights(_config(), _snapshot(LLAMA))
    assert applied_weights(weights) == {"llama-70b": pytest.approx(50.0), "mistral-7b": 3.0}
    got = _values(weight_samples(weights))
    llama = ("model", "llama-70b")
    assert got == {
        ("llm_seconds_per_token", (llama, ("phase", "prefill"))): pytest.approx(1e-4),
        ("llm_seconds_per_token", (llama, ("phase", "decode"))): pytest.approx(5e-3),
        ("llm_completion_weight", (llama, ("basis", "configured"))): 3.0,
        ("llm_completion_weight", (llama, ("basis", "measured"))): pytest.approx(50.0),
        ("llm_completion_weight", (llama, ("basis", "applied"))): pytest.approx(50.0),
        # A model vLLM does not report and that asks for nothing: configured, no fallback.
        ("llm_completion_weight", (("model", "mistral-7b"), ("basis", "configured"))): 3.0,
        ("llm_completion_weight", (("model", "mistral-7b"), ("basis", "applied"))): 3.0,
    }


def test_a_model_that_keeps_its_configured_weight_still_shows_the_measured_one() -> None:
    (llama, _) = completion_weights(_config(weight="configured"), _snapshot(LLAMA))
    assert (llama.applied, llama.fallback) == (3.0, None)
    assert llama.measured is not None
    assert llama.measured.weight == pytest.approx(50.0)


@pytest.mark.parametrize(
    ("snapshot", "reason"),
    [
        (None, SOURCE_DOWN),
        (_snapshot(), NO_DATA),
        (
            _snapshot(ModelTiming(LLAMA.model, 60.0, 1200.0, 600_000.0, 240_000.0, 99.0)),
            (TOO_FEW_REQUESTS),
        ),
        (_snapshot(ModelTiming(LLAMA.model, 0.0, 1200.0, 600_000.0, 240_000.0, 1000.0)), INVALID),
        (_snapshot(ModelTiming(LLAMA.model, 60.0, 0.0, 600_000.0, 240_000.0, 1000.0)), INVALID),
        (_snapshot(ModelTiming(LLAMA.model, 60.0, 1200.0, 600_000.0, 0.0, 1000.0)), INVALID),
        (_snapshot(ModelTiming(LLAMA.model, 1e-300, 1e300, 1.0, 1.0, 1000.0)), INVALID),
    ],
)
def test_the_configured_weight_stands_in_and_says_why(
    snapshot: VllmSnapshot | None, reason: str
) -> None:
    (llama, _) = completion_weights(_config(), snapshot)
    assert (llama.applied, llama.fallback) == (3.0, reason)
    got = _values(weight_samples([llama]))
    fallback = ("llm_completion_weight_fallback", (("model", "llama-70b"), ("reason", reason)))
    assert got[fallback] == 1.0


# --- a measured weight is applied only from plausible inputs ------------------------------------

# The demo's Llama (chargeback_demo/fake_vllm.py): 0.25 ms a prompt token, 12.5 ms a completion
# token, w = 50, over a day of its traffic.
PROMPT, COMPLETION, REQUESTS = 33_759_000.0, 10_552_331.0, 26_000.0
DEMO = ModelTiming(LLAMA.model, PROMPT * 0.00025, COMPLETION * 0.0125, PROMPT, COMPLETION, REQUESTS)


def _timing(**changed: float) -> ModelTiming:
    measures = {**vars(DEMO), **changed}
    del measures["model"]
    return ModelTiming(DEMO.model, **measures)


@pytest.mark.parametrize(
    ("timing", "reason"),
    [
        # The generation token counter reads 1 (a new replica, a reset the span caught on one
        # counter and not the other): 527,616,577 measured, refused by the token floor.
        (_timing(generation_tokens=1.0), TOO_FEW_TOKENS),
        (_timing(prompt_tokens=999.0, prefill_seconds=999 * 0.00025), TOO_FEW_TOKENS),
        # vLLM before #10853: prefill time in the decode histogram and decode time in prefill.
        (
            _timing(prefill_seconds=DEMO.decode_seconds, decode_seconds=DEMO.prefill_seconds),
            INVERTED_PHASES,
        ),
        # Decode per token just under prefill per token: inverted, whatever the band.
        (_timing(decode_seconds=COMPLETION * 0.000249), INVERTED_PHASES),
        # Above the band: 600 where the default band ends at 500.
        (_timing(decode_seconds=COMPLETION * 0.15), IMPLAUSIBLE),
    ],
    ids=["generation-reads-1", "prompt-tokens-few", "swapped", "inverted", "above-band"],
)
def test_an_implausible_measurement_is_neither_applied_nor_published(
    timing: ModelTiming, reason: str
) -> None:
    (llama, _) = completion_weights(_config(), _snapshot(timing))
    expected = reason
    assert (llama.applied, llama.fallback, llama.measured, llama.basis) == (
        3.0,
        expected,
        None,
        "configured",
    )
    got = _values(weight_samples([llama]))
    assert got == {
        ("llm_completion_weight", (("model", "llama-70b"), ("basis", "configured"))): 3.0,
        ("llm_completion_weight", (("model", "llama-70b"), ("basis", "applied"))): 3.0,
        ("llm_completion_weight_fallback", (("model", "llama-70b"), ("reason", expected))): 1.0,
    }


def test_the_demo_weight_is_inside_the_default_band_and_applied() -> None:
    (llama, _) = completion_weights(_config(), _snapshot(DEMO))
    assert llama.applied == pytest.approx(50.0)
    assert llama.fallback is None


@pytest.mark.parametrize(
    ("band", "weight", "applied", "reason"),
    [
        ({"min_weight": 60}, 50.0, 3.0, IMPLAUSIBLE),
        ({"max_weight": 40}, 50.0, 3.0, IMPLAUSIBLE),
        ({"min_weight": 50, "max_weight": 50.5}, 50.0, 50.0, None),  # the band is inclusive
        ({"max_weight": 1000}, 600.0, 600.0, None),
        ({}, 1.0, 1.0, None),  # decode as dear as prefill: the band's floor, not inverted
        ({}, 500.0, 500.0, None),
        ({}, 500.5, 3.0, IMPLAUSIBLE),
    ],
)
def test_the_band_is_the_configured_one(
    band: dict[str, float], weight: float, applied: float, reason: str | None
) -> None:
    timing = _timing(decode_seconds=COMPLETION * 0.00025 * weight)
    (llama, _) = completion_weights(_config(source=band), _snapshot(timing))
    assert llama.applied == pytest.approx(applied)
    assert llama.fallback == reason


def test_the_token_floor_is_the_configured_one() -> None:
    few = _timing(generation_tokens=500.0, decode_seconds=500 * 0.0125)
    (llama, _) = completion_weights(_config(), _snapshot(few))
    assert llama.fallback == TOO_FEW_TOKENS
    (llama, _) = completion_weights(_config(source={"min_tokens": 500}), _snapshot(few))
    assert llama.applied == pytest.approx(50.0)
    assert llama.fallback is None
    # Without the floor, a generation counter reading 1 is still refused by the band.
    one = _timing(generation_tokens=1.0)
    (llama, _) = completion_weights(_config(source={"min_tokens": 1}), _snapshot(one))
    assert (llama.applied, llama.fallback, llama.measured) == (3.0, IMPLAUSIBLE, None)


def test_a_model_keeping_its_configured_weight_publishes_no_implausible_one() -> None:
    (llama, _) = completion_weights(
        _config(weight="configured"), _snapshot(_timing(generation_tokens=1.0))
    )
    assert (llama.applied, llama.fallback, llama.measured) == (3.0, None, None)


def test_every_reason_is_documented_and_worded() -> None:
    docs = (Path(__file__).parents[4] / "docs" / "llm.md").read_text(encoding="utf-8")
    for reason in FALLBACK_REASONS:
        assert f"| `{reason}` |" in docs
        assert reason in REASONS


def test_measured_needs_the_vllm_source() -> None:
    with pytest.raises(ValueError, match=r"measured needs sources\.vllm"):
        _config(vllm=False)


def test_the_join_exports_the_weights_without_other_sources() -> None:
    config = _config()
    now = datetime(2026, 11, 15, 12, tzinfo=UTC)
    chargeback = join(
        config, Attributor(config), Snapshots(vllm=_snapshot(LLAMA)), Reading.open(now, config.zone)
    )
    got = _values(list(series(chargeback)))
    assert got[("llm_completion_weight", (("model", "llama-70b"), ("basis", "applied")))] == (
        pytest.approx(50.0)
    )


# --- money is conserved whichever weight is used -----------------------------------------------

CONFIG = _config(
    teams=[{"name": "a", "litellm_teams": ["a"]}, {"name": "b", "litellm_teams": ["b"]}]
)
ATTRIBUTOR = Attributor(CONFIG)
money = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
usage = st.lists(
    st.builds(
        ModelUsage,
        st.sampled_from(["a", "b", None]),
        st.none(),
        st.sampled_from(["llama-70b", "mistral-7b", "gpt-4o"]),
        st.one_of(st.none(), money),
        st.integers(0, 10**9),
        st.integers(0, 10**9),
        st.integers(0, 10**6),
    ),
    max_size=20,
)
weights = st.dictionaries(
    st.sampled_from(["llama-70b", "mistral-7b"]), st.floats(1e-3, 1e3), max_size=2
)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.dictionaries(st.sampled_from(["a", "b", "serving"]), money, max_size=3),
    usage,
    st.dictionaries(st.sampled_from(["serving", "a"]), money, max_size=2),
    weights,
)
def test_money_is_conserved_whichever_weight_is_used(
    gpu: dict[str, float],
    records: list[ModelUsage],
    serving: dict[str, float],
    own: dict[str, float],
) -> None:
    before = Ledger({(team, "gpu"): cost for team, cost in gpu.items()})
    cost = {"ns-serve": serving}
    configured, _ = apply_llm(before, records, CONFIG.llm_models, ATTRIBUTOR, cost, 3.0, 1.0)
    measured, report = apply_llm(
        before, records, CONFIG.llm_models, ATTRIBUTOR, cost, 3.0, 1.0, own
    )
    scale = max(1.0, before.total(), report.external_spend, sum(serving.values()))
    # The measured weights only move serving cost between teams: the same total, and the
    # serving components still sum to zero.
    assert measured.total() == pytest.approx(configured.total(), rel=1e-9, abs=1e-9 * scale)
    assert measured.total() == pytest.approx(
        before.total() + report.external_spend, rel=1e-9, abs=1e-9 * scale
    )
    moved = sum(v for (_, c), v in measured.costs.items() if c == "llm_serving")
    assert abs(moved) <= 1e-9 * scale


def test_the_worked_example_of_docs_llm() -> None:
    # docs/llm.md, "Worked example": w = 50 measured, against the configured 3.
    records = [
        ModelUsage("a", None, "llama-70b", None, 500_000, 40_000, 1),
        ModelUsage("b", None, "llama-70b", None, 100_000, 200_000, 1),
    ]
    cost = {"ns-serve": {"serving": 1260.0}}
    models = CONFIG.llm_models
    for own, (a, b) in (({"llama-70b": 50.0}, (250.0, 1010.0)), ({}, (591.82, 668.18))):
        after, _ = apply_llm(Ledger({}), records, models, ATTRIBUTOR, cost, 3.0, 1.0, own)
        got = {t: after.costs[(t, "llm_serving")] for t in ("a", "b")}
        assert got == {"a": pytest.approx(a, abs=0.005), "b": pytest.approx(b, abs=0.005)}
        assert after.costs[("serving", "llm_serving")] == -1260.0

"""LLM pricing drift: declared vs measured cost per weighted token and the recommended prices."""

from __future__ import annotations

import pytest

from exporter.exposition.series.llm import llm_pricing_samples
from exporter.ledger.llm.pricing import model_pricing
from tests.unit.ledger.llm.test_routing import (
    MODELS,
    RESEARCH,
    VISION,
    _use,
    _values,
)


def test_drift_and_recommended_prices_on_a_hand_computed_case() -> None:
    usage = [
        _use(RESEARCH, "llama-3-70b", 600, 200, 0.3),
        _use(VISION, "llama-3-70b", 100, 50, 0.06),
        _use(VISION, "gpt-4o", 10, 10, 2.0),
    ]
    serving = {"ns-search": {"search": 100.0, "x": 20.0}}
    samples = llm_pricing_samples(model_pricing(usage, MODELS, serving, 2.0))
    got = _values(samples)
    model = ("model", "llama-3-70b")
    # W = 1000 + 200 = 1200 weighted tokens; LiteLLM charged 0.36 for them.
    assert got[("llm_cost_per_token", (model, ("basis", "declared")))] == pytest.approx(0.0003)
    # Measured: 120 of serving cost / 1200 = 0.1; input = 0.1, output = w x input = 0.2, so
    # 700 x 0.1 + 250 x 0.2 = 120 recovers the cost.
    assert got[("llm_cost_per_token", (model, ("basis", "measured")))] == pytest.approx(0.1)
    assert got[("llm_recommended_cost_per_token", (model, ("direction", "input")))] == (
        pytest.approx(0.1)
    )
    assert got[("llm_recommended_cost_per_token", (model, ("direction", "output")))] == (
        pytest.approx(0.2)
    )
    assert len(samples) == 4  # nothing for the external model


def test_drift_skips_declared_when_spend_is_unknown() -> None:
    usage = [_use(RESEARCH, "qwen-32b", 10, 0, None)]
    pricing = model_pricing(usage, MODELS, {"ns-other": {"search": 1.0}}, 1.0)
    got = _values(llm_pricing_samples(pricing))
    assert set(got) == {
        ("llm_cost_per_token", (("model", "qwen-32b"), ("basis", "measured"))),
        ("llm_recommended_cost_per_token", (("model", "qwen-32b"), ("direction", "input"))),
        ("llm_recommended_cost_per_token", (("model", "qwen-32b"), ("direction", "output"))),
    }

"""Completion weights in the report, hand-worked: JSON, the text table, every fallback in words."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from exporter.config.schema import Config
from exporter.finance.report.figures import Report, build_report
from exporter.finance.report.formats import format_report
from exporter.finance.report.weights import weight_json
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.llm.weights import completion_weights
from exporter.sources.vllm.records import ModelTiming, VllmSnapshot

# Hand-worked. llama: 90 s of prefill for 450,000 prompt tokens is 0.2 ms a prompt token;
# 4,320 s of decode for 270,000 completion tokens is 16 ms a completion token; w = 16 / 0.2 =
# 80, over 1,200 requests. mistral: 2 s for 20,000 prompt tokens (0.1 ms), 60 s for 8,000
# completion tokens (7.5 ms): w = 75, but 40 requests are under min_requests, so 3 applies.
LLAMA = ModelTiming("meta-llama/Llama-3.1-70B", 90.0, 4_320.0, 450_000.0, 270_000.0, 1_200.0)
MISTRAL = ModelTiming("mistral-7b", 2.0, 60.0, 20_000.0, 8_000.0, 40.0)


def _config() -> Config:
    measured = {"namespace": "ns-serve", "weight": "measured"}
    return Config.model_validate(
        {
            "llm_completion_weight": 3,
            "llm_models": [
                {"model": "llama-70b", "self_hosted": {**measured, "served_model": LLAMA.model}},
                {"model": "mistral-7b", "self_hosted": measured},
                {"model": "tiny-1b", "self_hosted": {"namespace": "ns-serve"}},
                {"model": "gpt-4o", "external": True},
            ],
            "sources": {"vllm": {"url": "http://prom.invalid:9090", "min_requests": 100}},
        }
    )


def report(closed: bool = False, vllm: VllmSnapshot | None = None) -> Report:
    """A report whose weights the join computed from the hand-worked timings."""
    snapshot = VllmSnapshot((LLAMA, MISTRAL), 86_400.0) if vllm is None else vllm
    ledger = Ledger()
    ledger.add("search", "gpu", 100.0)
    built = build_report(ledger, "EUR", "2026-10", {}, closed=closed)
    return replace(built, weights=completion_weights(_config(), snapshot))


def _by_model(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["model"]: r for r in rows}


def test_every_weight_is_in_the_json() -> None:
    data = json.loads(format_report(report(), "json"))
    rows = _by_model(data["llm_completion_weights"])
    assert data["llm_completion_weights"] == weight_json(report().weights)
    assert rows["llama-70b"] == {
        "model": "llama-70b",
        "asked": "measured",
        "basis": "measured",
        "fallback_reason": None,
        "configured": 3.0,
        "measured": 80.0,
        "applied": 80.0,
        "prefill_ms_per_prompt_token": 0.2,
        "decode_ms_per_completion_token": 16.0,
        "requests_measured": 1200,
    }
    mistral = rows["mistral-7b"]
    assert (mistral["measured"], mistral["applied"]) == (75.0, 3.0)
    assert (mistral["basis"], mistral["fallback_reason"]) == ("configured", "too_few_requests")
    assert mistral["prefill_ms_per_prompt_token"] == 0.1
    assert mistral["decode_ms_per_completion_token"] == 7.5
    # Not measured (vLLM serves no tiny-1b) and not asked to be: configured, nothing to explain.
    tiny = rows["tiny-1b"]
    assert (tiny["asked"], tiny["basis"], tiny["fallback_reason"]) == (
        "configured",
        "configured",
        None,
    )
    assert tiny["measured"] is None and tiny["prefill_ms_per_prompt_token"] is None
    assert "gpt-4o" not in rows  # an external model has no serving cost to split


def test_a_closed_month_keeps_its_weights() -> None:
    # They were measured over that month (the vLLM source reads it to its end).
    data = json.loads(format_report(report(closed=True), "json"))
    assert _by_model(data["llm_completion_weights"])["llama-70b"]["applied"] == 80.0


def test_the_text_prints_them_for_people() -> None:
    text = format_report(report(), "table")
    assert "Completion weight per self-hosted model" in text
    (llama,) = [line for line in text.splitlines() if line.startswith("llama-70b")]
    assert llama.split() == [
        *("llama-70b", "Measured", "80.00", "3.00", "80.00"),
        *("0.200", "16.000", "1,200"),
    ]
    (mistral,) = [line for line in text.splitlines() if line.startswith("mistral-7b")]
    assert "Configured: too few requests measured" in mistral
    assert "75.00" in mistral and "0.100" in mistral and "7.500" in mistral
    assert not re.search(r"\de[-+]?\d", text)


def test_vllm_unread_says_so() -> None:
    # A read that failed leaves no snapshot: every measured weight asked for falls back.
    built = report()
    down = replace(built, weights=completion_weights(_config(), None))
    rows = _by_model(json.loads(format_report(down, "json"))["llm_completion_weights"])
    assert rows["llama-70b"]["fallback_reason"] == "source_down"
    assert rows["llama-70b"]["applied"] == 3.0 and rows["llama-70b"]["measured"] is None
    assert "Configured: vLLM's Prometheus not read" in format_report(down, "table")


def test_no_self_hosted_model_prints_no_table() -> None:
    ledger = Ledger()
    ledger.add("search", "gpu", 1.0)
    built = build_report(ledger, "EUR", "2026-10", {})
    assert json.loads(format_report(built, "json"))["llm_completion_weights"] == []
    assert "Completion weight" not in format_report(built, "table")

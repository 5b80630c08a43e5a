"""Model names from both sides come to one key; providers come from prefix, publisher, family."""

from __future__ import annotations

import pytest

from exporter.ledger.reconcile.models import bill_model, gateway_provider


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-2024-08-06, input", "gpt-4o"),
        ("openai/gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("Claude Sonnet 4 Usage - Input Tokens", "claude-sonnet-4"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
        ("Claude 3.5 Sonnet", "claude-3-5-sonnet"),
        ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("gpt-4.1", "gpt-4-1"),
        ("  GPT-4o  ", "gpt-4o"),
    ],
)
def test_both_sides_come_to_one_key(name: str, key: str) -> None:
    assert bill_model(name) == key


def test_models_priced_apart_stay_apart() -> None:
    assert bill_model("gpt-4o-mini-2024-07-18") != bill_model("gpt-4o-2024-08-06")
    assert bill_model("claude-3-5-haiku-20241022") != bill_model("Claude 3.5 Sonnet")


def test_the_provider_prefix_comes_first_then_the_publisher_then_the_family() -> None:
    declared = {"chat": "OpenAI", "writer": "Anthropic"}
    assert gateway_provider("chat", "azure/gpt-4o", declared) == "azure"
    assert gateway_provider("anthropic/claude-x", "", {}) == "anthropic"
    assert gateway_provider("chat", "gpt-4o", declared) == "openai"
    assert gateway_provider("writer", "mystery-model", declared) == "anthropic"
    assert gateway_provider("fast", "claude-3-5-haiku-20241022", {}) == "anthropic"
    assert gateway_provider("o3-mini", "o3-mini-2025-01-31", {}) == "openai"
    assert gateway_provider("llama", "llama-3-70b", {}) == ""


def test_a_gateway_that_gave_no_spend_by_date_is_not_read_as_zero() -> None:
    from exporter.ledger.reconcile import recorded_of
    from exporter.sources.litellm.snapshot import LiteLLMSnapshot, ModelUsage

    spent = ModelUsage("t", None, "gpt-4o", 3.0, 1, 1, 1)
    assert recorded_of(LiteLLMSnapshot((), (spent,)), None, {}).llm is None
    assert recorded_of(LiteLLMSnapshot((), ()), None, {}).llm == {}
    assert recorded_of(None, None, {}).llm is None

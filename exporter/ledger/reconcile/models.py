"""Model names as the gateway records them and as bills print them, brought to one key.

The gateway records the provider's model (`gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`);
bills print the same model in their own ways: a dated snapshot or its alias, an OpenAI cost
line item (`gpt-4o-2024-08-06, input`), an Anthropic cost description (`Claude Sonnet 4 Usage
- Input Tokens`), a Bedrock id (`anthropic.claude-3-5-sonnet-20241022-v2:0`). Both sides go
through the same steps (docs/reconciliation.md lists them), so a pair matches exactly when its
keys are equal; nothing is matched by similarity, which would pair models priced differently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["bill_model", "gateway_provider"]

# The families each provider names its models by: the last resort when neither the gateway's
# provider prefix nor the model's declared publisher says who bills it.
_FAMILIES: tuple[tuple[str, str], ...] = (
    ("claude", "anthropic"),
    ("gpt-", "openai"),
    ("chatgpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("text-embedding-", "openai"),
    ("omni-moderation", "openai"),
    ("dall-e", "openai"),
    ("whisper", "openai"),
    ("tts-", "openai"),
)
_VENDOR = re.compile(r"^(anthropic|amazon|meta|mistral|cohere|ai21)\.(?=[a-z])")
_VERSION = re.compile(r"-v\d+(:\d+)?$")
_DATED = re.compile(r"[-@]\d{4}-?\d{2}-?\d{2}$")
_USAGE = re.compile(r"\s+usage(\s.*)?$")


def bill_model(name: str) -> str:
    """The key a model matches by: lower case, no provider prefix, no snapshot date or version,
    no line-item or usage suffix, words joined by hyphens and dots as hyphens."""
    key = name.strip().lower().split(",", 1)[0].strip()
    key = key.rsplit("/", 1)[-1]
    key = _USAGE.sub("", key)
    key = re.sub(r"[\s.]+", "-", _VENDOR.sub("", key))
    key = _VERSION.sub("", key)
    key = _DATED.sub("", key)
    return key.removesuffix("-latest")


def gateway_provider(public: str, deployment: str, publishers: Mapping[str, str]) -> str:
    """Who bills one model the gateway recorded: LiteLLM's provider prefix on the deployment (or
    the public name), else the declared publisher of the public name, else the model family;
    "" when none says."""
    for name in (deployment, public):
        if "/" in name:
            return name.split("/", 1)[0].strip().lower()
    declared = publishers.get(public)
    if declared:
        return re.sub(r"\s+", "", declared.lower())
    key = bill_model(deployment or public)
    for prefix, provider in _FAMILIES:
        if key.startswith(prefix):
            return provider
    return ""

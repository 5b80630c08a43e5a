"""LLM families, from LiteLLM (spend, tokens, budgets, prices) and vLLM (completion weights)."""

from __future__ import annotations

from exporter.exposition.catalogue.family import G, family

LLM_SPEND_MONTH_TO_DATE = family(
    "llm_spend_month_to_date",
    G,
    "LiteLLM spend this calendar month per team and model, as LiteLLM prices it.",
    ("team", "model"),
    "currency",
    "litellm",
)

LLM_TOKENS_MONTH_TO_DATE = family(
    "llm_tokens_month_to_date",
    G,
    "LiteLLM tokens this calendar month per team, model and direction.",
    ("team", "model", "direction"),
    "tokens",
    "litellm",
)

LLM_REQUESTS_MONTH_TO_DATE = family(
    "llm_requests_month_to_date",
    G,
    "LiteLLM requests this calendar month per team and model.",
    ("team", "model"),
    "requests",
    "litellm",
)

LLM_BUDGET_SPEND = family(
    "llm_budget_spend",
    G,
    "LiteLLM team spend in the current budget window (LiteLLM resets it on its own schedule).",
    ("team",),
    "currency",
    "litellm",
)

LLM_BUDGET_MAX = family(
    "llm_budget_max",
    G,
    "LiteLLM team max_budget (hard cap).",
    ("team",),
    "currency",
    "litellm",
)

LLM_BUDGET_SOFT = family(
    "llm_budget_soft",
    G,
    "LiteLLM team soft_budget (alert only).",
    ("team",),
    "currency",
    "litellm",
)

LLM_BUDGET_RESET_TIMESTAMP_SECONDS = family(
    "llm_budget_reset_timestamp_seconds",
    G,
    "Next LiteLLM budget reset of the team.",
    ("team",),
    "seconds",
    "litellm",
)

LLM_COST_PER_TOKEN = family(
    "llm_cost_per_token",
    G,
    "Cost per weighted token of a self-hosted model: as LiteLLM declares it, and as measured from "
    "its serving cost.",
    ("model", "basis"),
    "currency",
    "litellm",
    inputs=("opencost", "vllm"),
)

LLM_RECOMMENDED_COST_PER_TOKEN = family(
    "llm_recommended_cost_per_token",
    G,
    "Recommended LiteLLM input_cost_per_token and output_cost_per_token for a self-hosted model.",
    ("model", "direction"),
    "currency",
    "litellm",
    inputs=("opencost", "vllm"),
)

LLM_UNKNOWN_MODELS = family(
    "llm_unknown_models",
    G,
    "Models seen in LiteLLM that the config does not declare (treated as external).",
    (),
    "models",
    "litellm",
)

LLM_MODELS_OVER_CAP = family(
    "llm_models_over_cap",
    G,
    "Distinct models beyond attribution.max_models whose team x model series were folded "
    "into model __other__.",
    (),
    "models",
    "litellm",
)

LLM_MONTH_EDGE_OFFSET_SECONDS = family(
    "llm_month_edge_offset_seconds",
    G,
    "Offset of the configured time zone from UTC at the start of this month (east positive): "
    "LiteLLM cuts its daily rows at UTC midnight, so at each month edge up to this much LLM "
    "usage time is counted in the neighbouring month.",
    (),
    "seconds",
    "litellm",
)

# Completion weights, measured from vLLM (docs/llm.md).
LLM_COMPLETION_WEIGHT = family(
    "llm_completion_weight",
    G,
    "Completion weight w of a self-hosted model in prompt + w x completion: as configured, as "
    "measured from vLLM's decode and prefill time, and the one applied.",
    ("model", "basis"),
    "ratio",
    "vllm",
)

LLM_SECONDS_PER_TOKEN = family(
    "llm_seconds_per_token",
    G,
    "vLLM request time per token of a self-hosted model over the span read: prefill seconds per "
    "prompt token, decode seconds per completion token.",
    ("model", "phase"),
    "seconds",
    "vllm",
)

LLM_COMPLETION_WEIGHT_FALLBACK = family(
    "llm_completion_weight_fallback",
    G,
    "1 when a model asks for its measured weight but the configured one is applied, by reason.",
    ("model", "reason"),
    "",
    "vllm",
)

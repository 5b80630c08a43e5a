"""LLM chargeback (pure): LiteLLM usage routed to teams, as samples, as money, and as prices.

`routing` finds each usage record's team and declaration; `usage` turns usage and budgets into
samples; `reattribution` adds external spend and moves self-hosted serving cost onto the teams
that sent the tokens; `pricing` compares declared and measured cost per weighted token.
"""

from __future__ import annotations

from exporter.ledger.llm.pricing import ModelPricing, llm_pricing_samples, model_pricing
from exporter.ledger.llm.reattribution import (
    EXTERNAL,
    SERVING,
    LlmReport,
    apply_llm,
    apply_llm_to,
    llm_report_samples,
    serving_namespaces,
)
from exporter.ledger.llm.routing import Routed, declaration, route, weighted_tokens
from exporter.ledger.llm.usage import (
    TeamModelUsage,
    llm_budget_state_samples,
    llm_usage_samples,
    team_model_usage,
)

__all__ = [
    "EXTERNAL",
    "SERVING",
    "LlmReport",
    "ModelPricing",
    "Routed",
    "TeamModelUsage",
    "apply_llm",
    "apply_llm_to",
    "declaration",
    "llm_budget_state_samples",
    "llm_pricing_samples",
    "llm_report_samples",
    "llm_usage_samples",
    "model_pricing",
    "route",
    "serving_namespaces",
    "team_model_usage",
    "weighted_tokens",
]

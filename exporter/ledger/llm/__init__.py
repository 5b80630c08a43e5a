"""LLM chargeback (pure): LiteLLM usage routed to teams, as money, and as prices.

`routing` finds each usage record's team and declaration; `usage` sums usage and budgets per
team; `reattribution` adds external spend and moves self-hosted serving cost onto the teams
that sent the tokens; `pricing` compares declared and measured cost per weighted token.
`memo` keeps the join's LLM part of the last snapshot, and `layout` the routing it keeps while
the records' uses (team, alias, public name, provider model) stay the same.
"""

from __future__ import annotations

from exporter.ledger.llm.pricing import ModelPricing, model_pricing
from exporter.ledger.llm.reattribution import (
    EXTERNAL,
    SERVING,
    LlmReport,
    apply_llm,
    apply_llm_to,
    serving_namespaces,
)
from exporter.ledger.llm.routing import Routed, declaration, route, weighted_tokens
from exporter.ledger.llm.usage import (
    TeamLlmBudget,
    TeamModelUsage,
    team_llm_budgets,
    team_model_usage,
)

__all__ = [
    "EXTERNAL",
    "SERVING",
    "LlmReport",
    "ModelPricing",
    "Routed",
    "TeamLlmBudget",
    "TeamModelUsage",
    "apply_llm",
    "apply_llm_to",
    "declaration",
    "model_pricing",
    "route",
    "serving_namespaces",
    "team_llm_budgets",
    "team_model_usage",
    "weighted_tokens",
]

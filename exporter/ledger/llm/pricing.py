"""Pricing drift: declared vs measured cost per weighted token of self-hosted models; the fix."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.config.schema import ModelDecl
from exporter.ledger.llm.routing import Routed, declaration, usage_order, weighted_tokens
from exporter.sources.litellm.snapshot import ModelUsage

__all__ = ["ModelPricing", "model_pricing"]


@dataclass(frozen=True)
class ModelPricing:
    """Cost per weighted token of a self-hosted model: declared, measured, and the fix."""

    model: str
    declared: float | None  # None when the proxy did not report the model's spend
    measured: float
    recommended_input: float
    recommended_output: float
    weight: float  # the completion weight its tokens were weighted by


def model_pricing(
    usage: Iterable[ModelUsage] | Routed,
    models: tuple[ModelDecl, ...],
    serving_cost: Mapping[str, Mapping[str, float]],
    weight: float,
    weights: Mapping[str, float] | None = None,
) -> list[ModelPricing]:
    """Declared vs measured cost per weighted token of each self-hosted model, and the fix.

    With W = prompt + w x completion over the month: declared = LiteLLM spend / W; measured =
    serving cost of the namespace / W of every model it serves. LiteLLM bills
    `prompt x input + completion x output`; choosing `output = w x input` makes that
    `input x (prompt + w x completion) = input x W`, so the price that recovers the measured cost
    is `input = serving cost / W` and `output = w x input`. Pass the month-to-date serving cost.
    A model with its own weight in `weights` (by declaration) is weighted and priced by it.
    """
    if isinstance(usage, Routed):
        routed = [(record, decl) for record, _, decl in usage.rows]
    else:
        decls = {m.model: m for m in models}
        routed = [(r, declaration(r, decls)) for r in sorted(usage, key=usage_order)]
    hosted: dict[str, str] = {}  # public name -> serving namespace
    own: dict[str, float] = {}  # public name -> its completion weight
    per_model: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    unknown_spend: set[str] = set()
    for record, decl in routed:
        if decl is None or decl.self_hosted is None:
            continue
        hosted.setdefault(record.model, decl.self_hosted.namespace)
        w = (weights or {}).get(decl.model, weight)
        own.setdefault(record.model, w)
        acc = per_model[record.model]
        acc[0] += weighted_tokens(record.prompt_tokens, record.completion_tokens, w)
        if record.spend is None:
            unknown_spend.add(record.model)
        else:
            acc[1] += record.spend
    ns_weight: dict[str, float] = defaultdict(float)
    for model in sorted(per_model):
        ns_weight[hosted[model]] += per_model[model][0]
    out: list[ModelPricing] = []
    for model in sorted(per_model):
        w_tokens, spend = per_model[model]
        if w_tokens <= 0:
            continue
        declared = None if model in unknown_spend else spend / w_tokens
        measured = sum(serving_cost.get(hosted[model], {}).values()) / ns_weight[hosted[model]]
        w = own[model]
        out.append(ModelPricing(model, declared, measured, measured, w * measured, w))
    return out

"""LLM series: usage and budgets per team and model, prices per token, completion weights."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from exporter.calendar import Month
from exporter.exposition.catalogue.llm import (
    LLM_BUDGET_MAX,
    LLM_BUDGET_RESET_TIMESTAMP_SECONDS,
    LLM_BUDGET_SOFT,
    LLM_BUDGET_SPEND,
    LLM_COMPLETION_WEIGHT,
    LLM_COMPLETION_WEIGHT_FALLBACK,
    LLM_COST_PER_TOKEN,
    LLM_MODELS_OVER_CAP,
    LLM_MONTH_EDGE_OFFSET_SECONDS,
    LLM_RECOMMENDED_COST_PER_TOKEN,
    LLM_REQUESTS_MONTH_TO_DATE,
    LLM_SECONDS_PER_TOKEN,
    LLM_SPEND_MONTH_TO_DATE,
    LLM_TOKENS_MONTH_TO_DATE,
    LLM_UNKNOWN_MODELS,
)
from exporter.exposition.samples import Sample
from exporter.exposition.series.model_fold import fold_usage
from exporter.ledger.llm import ModelPricing, TeamLlmBudget, TeamModelUsage
from exporter.ledger.llm.weights import CompletionWeight
from exporter.ledger.result import Chargeback

__all__ = [
    "llm_budget_samples",
    "llm_pricing_samples",
    "llm_read_samples",
    "llm_usage_samples",
    "series",
    "unknown_model_samples",
    "weight_samples",
]


def series(chargeback: Chargeback) -> list[Sample]:
    """Completion weights always; with LiteLLM its usage (models over the cap folded), budgets
    and how it was read, and with OpenCost too the prices per token and the undeclared models."""
    llm = chargeback.llm
    out = weight_samples(chargeback.weights)
    if llm is None:
        return out
    out += llm_usage_samples(fold_usage(llm.usage, frozenset(llm.folded_models)))
    out.append(Sample.of(LLM_MODELS_OVER_CAP, float(len(llm.folded_models))))
    out += llm_budget_samples(llm.budgets)
    out += llm_read_samples(chargeback.period)
    if llm.unknown_models is not None:
        out += llm_pricing_samples(llm.pricing)
        out += unknown_model_samples(llm.unknown_models)
    return out


def llm_budget_samples(budgets: Iterable[TeamLlmBudget]) -> list[Sample]:
    """LiteLLM's budget window per team: spend, max, soft, and the next reset as Unix seconds."""
    out: list[Sample] = []
    for b in budgets:
        figures = (
            (LLM_BUDGET_SPEND, b.spend),
            (LLM_BUDGET_MAX, b.max_budget),
            (LLM_BUDGET_SOFT, b.soft_budget),
            (LLM_BUDGET_RESET_TIMESTAMP_SECONDS, b.reset_at),
        )
        out.extend(Sample.of(f, value, team=b.team) for f, value in figures if value is not None)
    return out


def llm_usage_samples(totals: Mapping[tuple[str, str], TeamModelUsage]) -> list[Sample]:
    """Month-to-date spend, tokens and requests per team and model; unknown spend is left out."""
    out: list[Sample] = []
    for (team, model), use in sorted(totals.items()):
        if use.spend is not None:
            out.append(Sample.of(LLM_SPEND_MONTH_TO_DATE, use.spend, team=team, model=model))
        for direction, tokens in (
            ("prompt", use.prompt_tokens),
            ("completion", use.completion_tokens),
        ):
            out.append(
                Sample.of(
                    LLM_TOKENS_MONTH_TO_DATE, tokens, team=team, model=model, direction=direction
                )
            )
        out.append(Sample.of(LLM_REQUESTS_MONTH_TO_DATE, use.requests, team=team, model=model))
    return out


def llm_pricing_samples(pricing: Iterable[ModelPricing]) -> list[Sample]:
    """`llm_cost_per_token` (declared, measured) and the recommended LiteLLM prices."""
    out: list[Sample] = []
    for p in pricing:
        if p.declared is not None:
            out.append(Sample.of(LLM_COST_PER_TOKEN, p.declared, model=p.model, basis="declared"))
        out.append(Sample.of(LLM_COST_PER_TOKEN, p.measured, model=p.model, basis="measured"))
        for direction, price in (
            ("input", p.recommended_input),
            ("output", p.recommended_output),
        ):
            out.append(
                Sample.of(LLM_RECOMMENDED_COST_PER_TOKEN, price, model=p.model, direction=direction)
            )
    return out


def unknown_model_samples(unknown_models: tuple[str, ...]) -> list[Sample]:
    """How many models LiteLLM saw that the config does not declare."""
    return [Sample.of(LLM_UNKNOWN_MODELS, float(len(unknown_models)))]


def llm_read_samples(month: Month) -> list[Sample]:
    """How LiteLLM was read: the month-edge error of its UTC day rows (the zone's offset)."""
    return [Sample.of(LLM_MONTH_EDGE_OFFSET_SECONDS, month.utc_offset_seconds)]


def weight_samples(weights: Iterable[CompletionWeight]) -> list[Sample]:
    """The weights by basis, the measured time per token, and each fallback with its reason."""
    out: list[Sample] = []
    for w in weights:
        by_basis = [("configured", w.configured), ("applied", w.applied)]
        if w.measured is not None:
            m = w.measured
            by_basis.insert(1, ("measured", m.weight))
            phases = (("prefill", m.prefill_per_token), ("decode", m.decode_per_token))
            for phase, seconds in phases:
                out.append(Sample.of(LLM_SECONDS_PER_TOKEN, seconds, model=w.model, phase=phase))
        for basis, value in by_basis:
            out.append(Sample.of(LLM_COMPLETION_WEIGHT, value, model=w.model, basis=basis))
        if w.fallback is not None:
            reason = w.fallback
            out.append(Sample.of(LLM_COMPLETION_WEIGHT_FALLBACK, 1.0, model=w.model, reason=reason))
    return out

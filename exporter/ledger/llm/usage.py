"""LLM usage and budgets as samples: month-to-date spend, tokens and requests, budget windows."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.exposition.catalogue.llm import (
    LLM_BUDGET_MAX,
    LLM_BUDGET_RESET_TIMESTAMP_SECONDS,
    LLM_BUDGET_SOFT,
    LLM_BUDGET_SPEND,
    LLM_REQUESTS_MONTH_TO_DATE,
    LLM_SPEND_MONTH_TO_DATE,
    LLM_TOKENS_MONTH_TO_DATE,
)
from exporter.exposition.samples import Sample
from exporter.ledger.attribution import Attributor
from exporter.ledger.llm.routing import Routed, route, team_of
from exporter.sources.litellm.snapshot import ModelUsage, TeamBudget

__all__ = [
    "TeamModelUsage",
    "llm_budget_state_samples",
    "llm_usage_samples",
    "team_model_usage",
]


@dataclass(frozen=True)
class TeamModelUsage:
    """A team's month-to-date use of one model; `spend` is None when the proxy did not say."""

    spend: float | None
    prompt_tokens: int
    completion_tokens: int
    requests: int


def team_model_usage(
    usage: Iterable[ModelUsage] | Routed, attributor: Attributor
) -> dict[tuple[str, str], TeamModelUsage]:
    """Month-to-date use per (team, model), summed over the LiteLLM teams that map to the team.

    Several LiteLLM teams can land on one team (e.g. unmapped ones on `__unallocated__`). A spend
    the proxy did not report makes the group's spend unknown rather than too low.
    """
    spend: dict[tuple[str, str], float | None] = {}
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    rows = usage.rows if isinstance(usage, Routed) else route(usage, (), attributor).rows
    for record, team, _ in rows:
        key = (team, record.model)
        before = spend.get(key, 0.0)
        spend[key] = None if before is None or record.spend is None else before + record.spend
        acc = counts[key]
        acc[0] += record.prompt_tokens
        acc[1] += record.completion_tokens
        acc[2] += record.requests
    return {key: TeamModelUsage(spend[key], *counts[key]) for key in sorted(counts)}


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


def llm_budget_state_samples(teams: Iterable[TeamBudget], attributor: Attributor) -> list[Sample]:
    """LiteLLM budget window per team: spend, max, soft, and the next reset as unix seconds.

    When several LiteLLM teams map to one team, spends add up; a cap is exported only when every
    one of them has it (a team without a cap makes the sum uncapped), and the reset is the
    earliest.
    """
    groups: dict[str, list[TeamBudget]] = defaultdict(list)
    for record in teams:
        groups[team_of(record, attributor)].append(record)
    out: list[Sample] = []
    for team in sorted(groups):
        members = groups[team]
        spends = [m.spend for m in members if m.spend is not None]
        if spends:
            out.append(Sample.of(LLM_BUDGET_SPEND, sum(spends), team=team))
        for family, values in (
            (LLM_BUDGET_MAX, [m.max_budget for m in members]),
            (LLM_BUDGET_SOFT, [m.soft_budget for m in members]),
        ):
            known = [v for v in values if v is not None]
            if known and len(known) == len(values):
                out.append(Sample.of(family, sum(known), team=team))
        resets = [m.budget_reset_at for m in members if m.budget_reset_at is not None]
        if resets:
            stamp = min(resets).timestamp()
            out.append(Sample.of(LLM_BUDGET_RESET_TIMESTAMP_SECONDS, stamp, team=team))
    return out

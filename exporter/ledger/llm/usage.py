"""LLM usage and budgets per team: month-to-date spend, tokens and requests, budget windows."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from exporter.ledger.attribution import Attributor
from exporter.ledger.llm.routing import Routed, route, team_of
from exporter.sources.litellm.snapshot import ModelUsage, TeamBudget

__all__ = [
    "TeamLlmBudget",
    "TeamModelUsage",
    "team_llm_budgets",
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


@dataclass(frozen=True)
class TeamLlmBudget:
    """One team's LiteLLM budget window: spend, max and soft budgets, and the next reset.

    When several LiteLLM teams map to one team, spends add up; a cap is known only when every
    one of them has it (a team without a cap makes the sum uncapped), and the reset is the
    earliest. A figure nothing reports is None.
    """

    team: str
    spend: float | None
    max_budget: float | None
    soft_budget: float | None
    reset_at: float | None  # Unix seconds


def team_llm_budgets(
    teams: Iterable[TeamBudget], attributor: Attributor
) -> tuple[TeamLlmBudget, ...]:
    """LiteLLM's budget windows, per team."""
    groups: dict[str, list[TeamBudget]] = defaultdict(list)
    for record in teams:
        groups[team_of(record, attributor)].append(record)
    out: list[TeamLlmBudget] = []
    for team in sorted(groups):
        members = groups[team]
        spends = [m.spend for m in members if m.spend is not None]
        resets = [m.budget_reset_at for m in members if m.budget_reset_at is not None]
        out.append(
            TeamLlmBudget(
                team,
                sum(spends) if spends else None,
                _capped([m.max_budget for m in members]),
                _capped([m.soft_budget for m in members]),
                min(resets).timestamp() if resets else None,
            )
        )
    return tuple(out)


def _capped(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known and len(known) == len(values) else None

"""What one refresh read from LiteLLM, typed: team budgets and usage per team and model."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import TYPE_CHECKING

from exporter.sources.reading import Reading

# The join imports this module: the modules that read LiteLLM bring its HTTP client, so what
# only a day-by-day month or the source itself calls is imported where it is called.
if TYPE_CHECKING:
    from exporter.sources.litellm.by_day import Dated
    from exporter.sources.litellm.per_model import Usage

__all__ = ["LiteLLMSnapshot", "ModelUsage", "TeamBudget", "usage_records"]


@dataclass(frozen=True)
class TeamBudget:
    """One LiteLLM team's budget window: spend since its last reset, caps, and the next reset."""

    team_id: str
    alias: str | None
    spend: float | None
    max_budget: float | None  # None: no cap (never 0)
    soft_budget: float | None
    budget_reset_at: datetime | None


# Slots: a month of a thousand teams x fifty models is 50,000 of these in each snapshot kept,
# and a per-instance __dict__ would triple their size.
@dataclass(frozen=True, slots=True)
class ModelUsage:
    """Month-to-date use of one model by one LiteLLM team (`team_id` None: no team).

    `model` is the public name teams call (LiteLLM's `model_group`, the `model_name` of its
    config); `deployment` is the provider model behind it (LiteLLM's `model`), "" when unknown.
    A proxy that reports no model group gives the provider model as the public name too.
    """

    team_id: str | None
    alias: str | None
    model: str
    spend: float | None  # None: unknown (older proxy), not zero
    prompt_tokens: int
    completion_tokens: int
    requests: int
    deployment: str = ""


@dataclass(frozen=True)
class LiteLLMSnapshot:
    """Everything one refresh read from LiteLLM: team budgets, and this month's usage."""

    teams: tuple[TeamBudget, ...]
    usage: tuple[ModelUsage, ...]
    dropped: Mapping[str, int] = field(default_factory=dict)
    # Units of the exporter's currency per unit of LiteLLM's; 1.0 once converted.
    exchange_rate: float = 1.0
    repairs: int = 0  # kept days this refresh's full read found changed and replaced
    dated: Dated | None = None  # each UTC date's use, when the month was read by day
    # Month-to-date spend per request tag (/tag/daily/activity), read when a dimension asks.
    tags: Mapping[str, float] = field(default_factory=dict)
    # The same per (team id, tag), from the tags' API-key breakdowns ("": a key with no team).
    team_tags: Mapping[tuple[str, str], float] = field(default_factory=dict)
    # Spend per (UTC date, public name, provider model) over every team, for the bills.
    daily_spend: Mapping[tuple[date, str, str], float] = field(default_factory=dict)

    def as_of(self, reading: Reading) -> LiteLLMSnapshot:
        """The month's usage up to the last UTC date of `reading` (`Reading.by_day` only)."""
        from exporter.sources.litellm.by_day import summed_to
        from exporter.sources.litellm.cache import month_dates
        from exporter.sources.litellm.day_spend import dated_spend
        from exporter.sources.litellm.wire import SOURCE

        if self.dated is None:
            raise ValueError(f"{SOURCE}: the month was not read day by day")
        last = month_dates(reading.at, reading.month.zone).end
        aliases = {t.team_id: t.alias for t in self.teams}
        usage = tuple(usage_records(summed_to(self.dated, last), aliases))
        return replace(self, usage=usage, daily_spend=dated_spend(self.dated, last))

    def check_after(self, previous: object | None) -> None:
        """The team list is checked against its own `total`, and emptiness after data by the
        read itself (fetch keeps what each client's reads held); nothing else to compare."""
        del previous

    def converted(self) -> LiteLLMSnapshot:
        """The same figures with every amount in the exporter's currency."""
        if self.exchange_rate == 1.0:
            return self
        r = self.exchange_rate
        teams = tuple(
            replace(
                t,
                spend=_times(t.spend, r),
                max_budget=_times(t.max_budget, r),
                soft_budget=_times(t.soft_budget, r),
            )
            for t in self.teams
        )
        usage = tuple(replace(u, spend=_times(u.spend, r)) for u in self.usage)
        tags = {tag: spend * r for tag, spend in self.tags.items()}
        team_tags = {key: spend * r for key, spend in self.team_tags.items()}
        daily = {key: spend * r for key, spend in self.daily_spend.items()}
        # The dates stay in LiteLLM's currency: a converted snapshot is not summed again.
        return replace(
            self,
            teams=teams,
            usage=usage,
            exchange_rate=1.0,
            dated=None,
            tags=tags,
            team_tags=team_tags,
            daily_spend=daily,
        )


def _times(amount: float | None, exchange_rate: float) -> float | None:
    return None if amount is None else amount * exchange_rate


def usage_records(
    usage: Iterable[Usage], aliases: Mapping[str, str | None]
) -> Iterator[ModelUsage]:
    from exporter.sources.litellm.daily import UNASSIGNED

    for entity, alias, group, model, metrics in usage:
        team_id = None if entity == UNASSIGNED else entity
        if alias is None and team_id is not None:
            alias = aliases.get(team_id)
        yield ModelUsage(
            team_id,
            alias,
            group,
            metrics.spend,
            metrics.prompt_tokens,
            metrics.completion_tokens,
            metrics.requests,
            deployment=model,
        )

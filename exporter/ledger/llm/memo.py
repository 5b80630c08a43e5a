"""The join's LLM part of one LiteLLM snapshot, and the memo that redoes only what changed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from exporter.config.schema import ModelDecl
from exporter.ledger.attribution import Attributor
from exporter.ledger.llm.layout import Layout
from exporter.ledger.llm.routing import Routed, route
from exporter.ledger.llm.usage import (
    TeamLlmBudget,
    TeamModelUsage,
    team_llm_budgets,
    team_model_usage,
)
from exporter.sources.litellm.snapshot import LiteLLMSnapshot

__all__ = ["LlmMemo", "LlmPart", "llm_part"]


@dataclass(frozen=True)
class LlmPart:
    """What the join takes from one LiteLLM snapshot alone: usage and budgets per team."""

    llm: LiteLLMSnapshot  # in the exporter's currency
    routed: Routed  # its usage records with their teams and declarations
    usage: Mapping[tuple[str, str], TeamModelUsage]
    budgets: tuple[TeamLlmBudget, ...]


def llm_part(
    snapshot: LiteLLMSnapshot, attributor: Attributor, models: tuple[ModelDecl, ...]
) -> LlmPart:
    """Convert the snapshot, route its records, and sum its usage and budgets per team."""
    # LiteLLM's money enters in the exporter's currency, here and nowhere later.
    llm = snapshot.converted()
    routed = route(llm.usage, models, attributor)
    usage = team_model_usage(routed, attributor)
    return LlmPart(llm, routed, usage, team_llm_budgets(llm.teams, attributor))


class LlmMemo:
    """The LLM part of the last LiteLLM snapshot joined, reused while that snapshot is fresh, and
    redone along the last routing when only its figures moved.

    LiteLLM refreshes on its own interval, and at a thousand teams by fifty models its part of
    the join is most of it: the other sources' refreshes need not redo it. Keyed on the
    snapshot object (held, so its id cannot be reused), the attributor and the declarations,
    not on `converted()`, which makes a new object per call. A new snapshot whose records have
    the same uses (a steady refresh re-reads only today's date) keeps the routing (`Layout`)
    and every per-team figure and budget that did not change; the result equals `llm_part`.
    """

    def __init__(self) -> None:
        self._key: tuple[object, ...] = ()  # snapshot, attributor, declarations: held
        self._part: LlmPart | None = None
        self._layout: Layout | None = None

    def part(
        self, snapshot: LiteLLMSnapshot, attributor: Attributor, models: tuple[ModelDecl, ...]
    ) -> LlmPart:
        """The snapshot's LLM part, computed when it is not the last one seen."""
        key = (snapshot, attributor, models)
        before = self._part
        if before is not None and all(a is b for a, b in zip(key, self._key, strict=True)):
            return before
        llm = snapshot.converted()
        layout = self._layout
        if (
            layout is None
            or before is None
            or not layout.fits(llm.usage, attributor, models, before.routed)
        ):
            layout, before = Layout.of(llm.usage, attributor, models), None
        routed = layout.routed(llm.usage)
        usage = layout.sums(routed, before.usage if before is not None else None)
        if before is not None and before.llm.teams == llm.teams:
            budgets = before.budgets  # same attributor: the layout fits
        else:
            budgets = team_llm_budgets(llm.teams, attributor)
        self._part, self._key, self._layout = LlmPart(llm, routed, usage, budgets), key, layout
        return self._part

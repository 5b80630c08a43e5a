"""The join's LLM part of one LiteLLM snapshot, and the memo that reuses it while it is fresh."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from exporter.config.schema import ModelDecl
from exporter.ledger.attribution import Attributor
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
    """The LLM part of the last LiteLLM snapshot joined, reused while that snapshot is fresh.

    LiteLLM refreshes on its own interval, and at a thousand teams by fifty models its part of
    the join is most of it: the other sources' refreshes need not redo it. Keyed on the
    snapshot object (held, so its id cannot be reused), the attributor and the declarations,
    not on `converted()`, which makes a new object per call.
    """

    def __init__(self) -> None:
        self._key: tuple[object, ...] = ()  # snapshot, attributor, declarations: held
        self._part: LlmPart | None = None

    def part(
        self, snapshot: LiteLLMSnapshot, attributor: Attributor, models: tuple[ModelDecl, ...]
    ) -> LlmPart:
        """The snapshot's LLM part, computed when it is not the last one seen."""
        key = (snapshot, attributor, models)
        if self._part is None or not all(a is b for a, b in zip(key, self._key, strict=True)):
            self._part, self._key = llm_part(snapshot, attributor, models), key
        return self._part

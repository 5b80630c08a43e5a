"""The model fold: team x model figures of models over the cap summed into `__other__`.

Money is summed with `math.fsum` over a sorted order, so `__other__` is exactly the sum of the
figures it replaces whatever order upstream JSON came in; an unknown spend among them makes
the fold's spend unknown rather than too low. Ratios are rebuilt from the folded sums.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TypeVar

from exporter.ledger.attribution import OTHER
from exporter.ledger.llm import TeamModelUsage
from exporter.ledger.units.build_or_buy import TeamAlternative
from exporter.ledger.units.tokens import TeamTokenCost

__all__ = ["fold_alternatives", "fold_token_costs", "fold_usage"]

_Row = TypeVar("_Row")


def _known_sum(values: list[float | None]) -> float | None:
    """The exact sum, or None when any part is unknown."""
    if any(v is None for v in values):
        return None
    return math.fsum(v for v in values if v is not None)


def _fold(
    rows: Iterable[_Row],
    key: Callable[[_Row], tuple[str, str]],
    folded: Collection[str],
    other: Callable[[str, list[_Row]], _Row],
) -> list[_Row]:
    """Rows in (team, model) order, then each team's folded rows as one `other(team, parts)`."""
    ordered = sorted(rows, key=key)
    gone: dict[str, list[_Row]] = defaultdict(list)
    for row in ordered:
        team, model = key(row)
        if model in folded:
            gone[team].append(row)
    kept = [row for row in ordered if key(row)[1] not in folded]
    return kept + [other(team, parts) for team, parts in gone.items()]


def fold_usage(
    usage: Mapping[tuple[str, str], TeamModelUsage], folded: Collection[str]
) -> Mapping[tuple[str, str], TeamModelUsage]:
    """Usage per (team, model), each team's folded models summed under `__other__`."""
    if not folded:
        return usage

    def other(
        team: str, parts: list[tuple[tuple[str, str], TeamModelUsage]]
    ) -> tuple[tuple[str, str], TeamModelUsage]:
        uses = [use for _, use in parts]
        return (team, OTHER), TeamModelUsage(
            spend=_known_sum([u.spend for u in uses]),
            prompt_tokens=sum(u.prompt_tokens for u in uses),
            completion_tokens=sum(u.completion_tokens for u in uses),
            requests=sum(u.requests for u in uses),
        )

    return dict(_fold(usage.items(), lambda item: item[0], folded, other))


def fold_token_costs(
    teams: Iterable[TeamTokenCost], folded: Collection[str]
) -> list[TeamTokenCost]:
    """Each team's cost and volume per model, folded models summed under `__other__`."""
    if not folded:
        return list(teams)

    def other(team: str, parts: list[TeamTokenCost]) -> TeamTokenCost:
        kinds = {p.kind for p in parts}
        return TeamTokenCost(
            team=team,
            model=OTHER,
            kind=kinds.pop() if len(kinds) == 1 else "mixed",
            prompt_tokens=sum(p.prompt_tokens for p in parts),
            completion_tokens=sum(p.completion_tokens for p in parts),
            requests=sum(p.requests for p in parts),
            cost=_known_sum([p.cost for p in parts]),
        )

    return _fold(teams, _team_model, folded, other)


def fold_alternatives(
    teams: Iterable[TeamAlternative], folded: Collection[str]
) -> list[TeamAlternative]:
    """Each team's bought alternative per model, folded models summed under `__other__`."""
    if not folded:
        return list(teams)

    def other(team: str, parts: list[TeamAlternative]) -> TeamAlternative:
        return TeamAlternative(
            team=team,
            model=OTHER,
            self_hosted=_known_sum([p.self_hosted for p in parts]),
            alternative=math.fsum(p.alternative for p in parts),
        )

    return _fold(teams, _team_model, folded, other)


def _team_model(row: TeamTokenCost | TeamAlternative) -> tuple[str, str]:
    return row.team, row.model

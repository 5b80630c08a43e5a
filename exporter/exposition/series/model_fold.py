"""The model fold: team x model figures of models over the cap summed into `__other__`.

Money is summed with `math.fsum` over a sorted order, so `__other__` is exactly the sum of the
figures it replaces whatever order upstream JSON came in; an unknown spend among them makes
the fold's spend unknown rather than too low. Ratios are rebuilt from the folded sums.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping

from exporter.ledger.attribution import OTHER
from exporter.ledger.llm import TeamModelUsage
from exporter.ledger.units.build_or_buy import TeamAlternative
from exporter.ledger.units.tokens import TeamTokenCost

__all__ = ["fold_alternatives", "fold_token_costs", "fold_usage"]


def _known_sum(values: list[float | None]) -> float | None:
    """The exact sum, or None when any part is unknown."""
    if any(v is None for v in values):
        return None
    return math.fsum(v for v in values if v is not None)


def fold_usage(
    usage: Mapping[tuple[str, str], TeamModelUsage], folded: Collection[str]
) -> Mapping[tuple[str, str], TeamModelUsage]:
    """Usage per (team, model), each team's folded models summed under `__other__`."""
    if not folded:
        return usage
    out: dict[tuple[str, str], TeamModelUsage] = {}
    gone: dict[str, list[TeamModelUsage]] = defaultdict(list)
    for (team, model), use in sorted(usage.items()):
        if model in folded:
            gone[team].append(use)
        else:
            out[(team, model)] = use
    for team, uses in gone.items():
        out[(team, OTHER)] = TeamModelUsage(
            spend=_known_sum([u.spend for u in uses]),
            prompt_tokens=sum(u.prompt_tokens for u in uses),
            completion_tokens=sum(u.completion_tokens for u in uses),
            requests=sum(u.requests for u in uses),
        )
    return out


def fold_token_costs(
    teams: Iterable[TeamTokenCost], folded: Collection[str]
) -> list[TeamTokenCost]:
    """Each team's cost and volume per model, folded models summed under `__other__`."""
    if not folded:
        return list(teams)
    rows = sorted(teams, key=lambda t: (t.team, t.model))
    out = [t for t in rows if t.model not in folded]
    gone: dict[str, list[TeamTokenCost]] = defaultdict(list)
    for t in rows:
        if t.model in folded:
            gone[t.team].append(t)
    for team, parts in gone.items():
        kinds = {p.kind for p in parts}
        out.append(
            TeamTokenCost(
                team=team,
                model=OTHER,
                kind=kinds.pop() if len(kinds) == 1 else "mixed",
                prompt_tokens=sum(p.prompt_tokens for p in parts),
                completion_tokens=sum(p.completion_tokens for p in parts),
                requests=sum(p.requests for p in parts),
                cost=_known_sum([p.cost for p in parts]),
            )
        )
    return out


def fold_alternatives(
    teams: Iterable[TeamAlternative], folded: Collection[str]
) -> list[TeamAlternative]:
    """Each team's bought alternative per model, folded models summed under `__other__`."""
    if not folded:
        return list(teams)
    rows = sorted(teams, key=lambda t: (t.team, t.model))
    out = [t for t in rows if t.model not in folded]
    gone: dict[str, list[TeamAlternative]] = defaultdict(list)
    for t in rows:
        if t.model in folded:
            gone[t.team].append(t)
    for team, parts in gone.items():
        out.append(
            TeamAlternative(
                team=team,
                model=OTHER,
                self_hosted=_known_sum([p.self_hosted for p in parts]),
                alternative=math.fsum(p.alternative for p in parts),
            )
        )
    return out

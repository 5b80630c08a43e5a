"""Shared costs: what shared namespaces and teams cost, spread onto the other teams by a rule.

Pure; conserves money. The attributor places every workload of a shared namespace on
`__shared__`; this step then takes all the money of `__shared__` and of the shared teams (their
own cost, idle share, quota and LLM components alike) and adds it to the receiving teams as the
component `shared`:

- `proportional`: in proportion to each team's own cost in the same window (positive part);
- `even`: the same amount for every declared team (teams with cost when none is declared);
- `fixed`: by the configured weights, whether or not the team spent anything.

Reserved rows (`__idle__`, `__unallocated__`, `__other__`) never receive shared cost. When no
team can receive it (nobody spent anything), it stays visible on `__unallocated__`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from exporter.config.dimensions import SharedCostsConfig, ShareRule
from exporter.ledger.attribution import IDLE, OTHER, SHARED, UNALLOCATED, normalise_team
from exporter.ledger.costs.ledger import Ledger

__all__ = ["SHARED_COMPONENT", "share_weights", "spread_shared"]

SHARED_COMPONENT = "shared"
_NEVER_RECEIVE = frozenset({IDLE, UNALLOCATED, OTHER, SHARED})


def spread_shared(ledger: Ledger, config: SharedCostsConfig, declared: Iterable[str]) -> Ledger:
    """A new ledger with the shared rows' money moved onto the teams as `shared`."""
    # A shared team is written as a team name or as the label value that names it.
    sources = {SHARED, *config.teams, *(normalise_team(t) for t in config.teams)}
    taken = sum(v for (team, _), v in sorted(ledger.costs.items()) if team in sources)
    out = Ledger(fallback=dict(ledger.fallback))
    for (team, component), amount in sorted(ledger.costs.items()):
        if team not in sources:
            out.add(team, component, amount)
    if not taken:
        return out
    weights = share_weights(out, config, [d for d in declared if d not in sources])
    total = sum(weights.values())
    if total <= 0:
        out.add(UNALLOCATED, SHARED_COMPONENT, taken)
        return out
    for team in sorted(weights):
        out.add(team, SHARED_COMPONENT, taken * (weights[team] / total))
    return out


def share_weights(
    ledger: Ledger, config: SharedCostsConfig, declared: list[str]
) -> Mapping[str, float]:
    """Each receiving team's weight under the configured rule (zero weights left out)."""
    if config.rule is ShareRule.FIXED:
        return dict(config.weights)
    own: dict[str, float] = defaultdict(float)
    for (team, _), amount in sorted(ledger.costs.items()):
        if team not in _NEVER_RECEIVE:
            own[team] += amount
    if config.rule is ShareRule.EVEN:
        names = declared or sorted(t for t, v in own.items() if v > 0)
        return {name: 1.0 for name in names}
    return {team: amount for team, amount in own.items() if amount > 0}

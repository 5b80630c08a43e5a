"""A closed month's true-ups added to the team ledger, as the component `true_up`.

The join adds them to the month's window before dimensions split it, so every dimension takes
them as it takes any other cost of a team and still adds up to the same total.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from exporter.ledger.costs.components import LLM, Component
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.llm.usage import TeamModelUsage
from exporter.ledger.reconcile.figures import Reconciliation
from exporter.ledger.reconcile.models import gateway_provider
from exporter.ledger.reconcile.true_up import TrueUp, true_up
from exporter.sources.bills.lines import BillKind

__all__ = ["true_ups", "with_true_ups"]

_NOT_HARDWARE = frozenset({*LLM, Component.TRUE_UP})


def true_ups(
    reconciliation: Reconciliation,
    usage: Mapping[tuple[str, str], TeamModelUsage],
    ledger: Ledger,
    publishers: Mapping[str, str],
) -> tuple[TrueUp, ...]:
    """Each closed, whole, true-up bill's difference spread by the teams' recorded shares: of
    the provider's spend through the gateway (LLM), of the hardware cost (cluster)."""
    hardware: dict[str, float] = defaultdict(float)
    for (team, component), amount in ledger.costs.items():
        if component not in _NOT_HARDWARE:
            hardware[team] += amount
    out = []
    for figures in reconciliation.bills:
        if figures.kind is BillKind.CLUSTER:
            shares: Mapping[str, float] = hardware
        else:
            shares = _llm_shares(usage, figures.provider, publishers)
        found = true_up(figures, shares)
        if found is not None:
            out.append(found)
    return tuple(out)


def _llm_shares(
    usage: Mapping[tuple[str, str], TeamModelUsage], provider: str, publishers: Mapping[str, str]
) -> dict[str, float]:
    shares: dict[str, float] = defaultdict(float)
    for (team, model), use in usage.items():
        if use.spend and gateway_provider(model, "", publishers) == provider:
            shares[team] += use.spend
    return dict(shares)


def with_true_ups(ledger: Ledger, ups: tuple[TrueUp, ...]) -> Ledger:
    """A new ledger with every true-up's parts added to their teams' `true_up` component."""
    out = Ledger(costs=dict(ledger.costs), fallback=dict(ledger.fallback))
    for up in ups:
        for team, amount in up.teams.items():
            out.add(team, Component.TRUE_UP, amount)
    return out

"""Idle policies as data: one rule per `idle_policy`, and the table from its name to the rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from exporter.config.types import IdlePolicy

__all__ = ["RULES", "IdleRule", "idle_rule"]


@dataclass(frozen=True)
class IdleRule:
    """What one `idle_policy` means to the ledger (README "Who pays for idle").

    The ledger asks a rule these questions and never which policy it is, so a new policy is
    one more rule in `RULES` and one more name in the config's `IdlePolicy`.
    """

    policy: IdlePolicy  # the config name that selects this rule
    # Resources whose idle the teams that used them share in proportion to their usage cost
    # (component `idle_share`); the idle of any other resource stays on `__idle__`.
    shared_by_usage: frozenset[str]
    # A team with Kueue nominal GPU quota pays nominal + borrowed - lent (at each flavor's
    # price) in place of its GPU usage, the difference coming from `__idle__`'s GPU cost.
    # Otherwise only the borrowed part of a team's GPU usage moves to `borrowed`.
    charges_gpu_quota: bool

    def shares_idle(self, resource: str) -> bool:
        """Whether a resource's idle goes to the teams that used it, rather than `__idle__`."""
        return resource in self.shared_by_usage


_ALL = frozenset({"gpu", "cpu", "ram"})

RULES: Mapping[IdlePolicy, IdleRule] = MappingProxyType(
    {
        rule.policy: rule
        for rule in (
            # Showback: each team pays its own usage.
            IdleRule(IdlePolicy.SEPARATE, shared_by_usage=frozenset(), charges_gpu_quota=False),
            # OpenCost's shareIdle.
            IdleRule(IdlePolicy.PROPORTIONAL, shared_by_usage=_ALL, charges_gpu_quota=False),
            # The quota holder pays for GPUs; CPU and RAM have no reservation to charge, so
            # they fall back to `proportional`.
            IdleRule(
                IdlePolicy.RESERVATION,
                shared_by_usage=frozenset({"cpu", "ram"}),
                charges_gpu_quota=True,
            ),
        )
    }
)


def idle_rule(policy: IdlePolicy) -> IdleRule:
    """The rule the config's `idle_policy` names."""
    return RULES[policy]

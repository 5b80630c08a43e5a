"""Idle policy rules: one rule per config name, and every rule conserves money."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from exporter.config.schema import Config, IdlePolicy
from exporter.ledger.attribution import IDLE, UNALLOCATED, Placement
from exporter.ledger.costs.ledger import IDLE_RESOURCES, CostLine, charge
from exporter.ledger.costs.policies import RULES, IdleRule, idle_rule
from exporter.ledger.costs.quota_charges import apply_gpu_quota

EVERY_RULE = pytest.mark.parametrize("rule", list(RULES.values()), ids=lambda r: str(r.policy))


def test_each_config_name_maps_to_exactly_one_rule() -> None:
    assert set(RULES) == set(IdlePolicy)
    assert all(idle_rule(policy).policy is policy for policy in IdlePolicy)
    # No two names share a rule, so no name silently means another policy.
    assert len({id(rule) for rule in RULES.values()}) == len(IdlePolicy)
    assert len(set(RULES.values())) == len(IdlePolicy)


@EVERY_RULE
def test_a_rule_shares_only_resources_the_ledger_knows_idle_for(rule: IdleRule) -> None:
    assert rule.shared_by_usage <= set(IDLE_RESOURCES)


@EVERY_RULE
def test_the_config_needs_kueue_exactly_for_a_rule_that_charges_quota(rule: IdleRule) -> None:
    assert rule.policy.needs_kueue is rule.charges_gpu_quota
    name = str(rule.policy)
    kueue = {"kueue": {"url": "https://kubernetes.default.svc"}}
    assert Config.model_validate({"idle_policy": name, "sources": kueue}).idle_policy is rule.policy
    if rule.policy.needs_kueue:
        with pytest.raises(ValidationError, match=r"needs sources\.kueue"):
            Config.model_validate({"idle_policy": name})
    else:
        assert Config.model_validate({"idle_policy": name}).idle_policy is rule.policy


def _line(team: str, node: str, **costs: float) -> CostLine:
    return CostLine(Placement(team, "label", "team"), node, costs)


# Two nodes for one hour. GPUs at 2.00: a uses 2, b uses 1 (on quota it borrowed from c), c
# none, 3 idle; CPU and RAM idle on both nodes, one of them with no CPU user at all.
LINES = [
    _line("a", "n1", gpu=4.0, cpu=1.5, ram=0.5),
    _line("b", "n2", gpu=2.0, ram=0.25),
    _line(UNALLOCATED, "n1", cpu=0.5, storage=0.75),
]
IDLE_BY_NODE = {"n1": {"gpu": 4.0, "cpu": 1.0, "ram": 0.5}, "n2": {"gpu": 2.0, "cpu": 0.75}}
NOMINAL, BORROWED, LENT = {"a": 2.0, "c": 2.0}, {"b": 1.0}, {"c": 1.0}


@EVERY_RULE
def test_every_rule_conserves_money_on_a_small_cluster(rule: IdleRule) -> None:
    cluster = math.fsum(v for line in LINES for v in line.costs.values()) + math.fsum(
        v for resources in IDLE_BY_NODE.values() for v in resources.values()
    )
    charged = charge(LINES, IDLE_BY_NODE, rule)
    assert charged.total() == pytest.approx(cluster, rel=1e-9)
    quota = apply_gpu_quota(charged, NOMINAL, BORROWED, LENT, 2.0, 1.0, rule)
    assert quota.total() == pytest.approx(cluster, rel=1e-9)
    # Idle the rule does not share stays on __idle__, whole.
    for resource in IDLE_RESOURCES:
        if not rule.shares_idle(resource):
            kept = sum(group.get(resource, 0.0) for group in IDLE_BY_NODE.values())
            assert charged.costs.get((IDLE, resource), 0.0) == pytest.approx(kept)
    # CPU idle on n2 had no CPU user there, so no rule can share it.
    assert charged.costs.get((IDLE, "cpu"), 0.0) >= 0.75

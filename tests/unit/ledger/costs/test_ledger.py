"""Chargeback policies: the worked example to the cent, and conservation on random clusters."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import IdlePolicy
from exporter.ledger.attribution import Placement
from exporter.ledger.costs.ledger import CostLine, Ledger, cap_teams, charge
from exporter.ledger.costs.policies import RULES, IdleRule, idle_rule
from tests.support.properties import examples

PRICE, HOURS = 1.40, 720
SEPARATE = idle_rule(IdlePolicy.SEPARATE)
PROPORTIONAL = idle_rule(IdlePolicy.PROPORTIONAL)
RESERVATION = idle_rule(IdlePolicy.RESERVATION)


def _line(team: str, gpu_hours: float, node: str = "n1", **costs: float) -> CostLine:
    return CostLine(Placement(team, "label", "team"), node, {"gpu": gpu_hours * PRICE, **costs})


def _worked_example() -> tuple[list[CostLine], dict[str, dict[str, float]]]:
    lines = [_line("A", 1080), _line("B", 432), _line("C", 252)]
    used = sum(line.costs["gpu"] for line in lines)
    return lines, {"": {"gpu": 4 * PRICE * HOURS - used}}


def _team_totals(ledger: Ledger) -> dict[str, float]:
    return {team: round(sum(c.values()), 2) for team, c in ledger.by_team().items()}


def test_worked_example_separate() -> None:
    lines, idle = _worked_example()
    totals = _team_totals(charge(lines, idle, SEPARATE))
    assert totals == {"A": 1512.00, "B": 604.80, "C": 352.80, "__idle__": 1562.40}
    assert round(sum(totals.values()), 2) == 4032.00


def test_worked_example_proportional() -> None:
    lines, idle = _worked_example()
    ledger = charge(lines, idle, PROPORTIONAL)
    shares = {t: round(c["idle_share"], 2) for t, c in ledger.by_team().items()}
    assert shares == {"A": 956.57, "B": 382.63, "C": 223.20}
    assert round(ledger.total(), 2) == 4032.00


def test_reservation_leaves_gpu_idle_for_the_quota_module_and_shares_cpu() -> None:
    lines = [_line("A", 10, cpu=3.0), _line("B", 0, cpu=1.0)]
    ledger = charge(lines, {"": {"gpu": 5.0, "cpu": 2.0}}, RESERVATION)
    assert ledger.costs[("__idle__", "gpu")] == 5.0
    assert ledger.costs[("A", "idle_share")] == pytest.approx(1.5)
    assert ledger.costs[("B", "idle_share")] == pytest.approx(0.5)


def test_idle_with_no_user_stays_idle() -> None:
    ledger = charge([_line("A", 0, cpu=1.0)], {"": {"gpu": 7.0, "cpu": 1.0}}, PROPORTIONAL)
    assert ledger.costs[("__idle__", "gpu")] == 7.0
    assert ledger.costs[("A", "idle_share")] == 1.0


def test_idle_by_node_shares_within_the_node() -> None:
    lines = [_line("A", 1, node="n1"), _line("B", 1, node="n2")]
    ledger = charge(lines, {"n1": {"gpu": 2.0}, "n2": {"gpu": 6.0}}, PROPORTIONAL)
    assert ledger.costs[("A", "idle_share")] == 2.0
    assert ledger.costs[("B", "idle_share")] == pytest.approx(6.0)


def test_fallback_cost_is_reported() -> None:
    line = CostLine(Placement("A", "fallback", "app_kubernetes_io_part_of"), "n1", {"cpu": 2.5})
    assert charge([line], {}, SEPARATE).fallback == {("A", "app_kubernetes_io_part_of"): 2.5}


money = st.floats(min_value=0, max_value=1e5, allow_nan=False, allow_infinity=False)
components = st.fixed_dictionaries(
    {"gpu": money, "cpu": money, "ram": money, "storage": money, "network": money, "other": money}
)
cost_lines = st.lists(
    st.builds(
        lambda team, node, costs, via: CostLine(Placement(team, via, "k"), node, costs),
        st.sampled_from(["a", "b", "c", "d", "__unallocated__"]),
        st.sampled_from(["n1", "n2", "n3"]),
        components,
        st.sampled_from(["label", "fallback"]),
    ),
    max_size=30,
)
idle_by_group = st.one_of(
    st.fixed_dictionaries({"": st.fixed_dictionaries({"gpu": money, "cpu": money, "ram": money})}),
    st.dictionaries(
        st.sampled_from(["n1", "n2", "n3", "n4"]),
        st.fixed_dictionaries({"gpu": money, "cpu": money, "ram": money}),
    ),
)


def _cluster_cost(lines: list[CostLine], idle: dict[str, dict[str, float]]) -> float:
    return math.fsum(v for line in lines for v in line.costs.values()) + math.fsum(
        v for group in idle.values() for v in group.values()
    )


@settings(max_examples=examples(300))
@given(cost_lines, idle_by_group, st.sampled_from(list(RULES.values())))
def test_every_policy_conserves_money(
    lines: list[CostLine], idle: dict[str, dict[str, float]], rule: IdleRule
) -> None:
    expected = _cluster_cost(lines, idle)
    got = charge(lines, idle, rule).total()
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)


@settings(max_examples=examples(100))
@given(
    cost_lines,
    idle_by_group,
    st.sampled_from([SEPARATE, PROPORTIONAL]),
    st.randoms(),
)
def test_result_does_not_depend_on_input_order(
    lines: list[CostLine], idle: dict[str, dict[str, float]], rule: IdleRule, rnd: random.Random
) -> None:
    expected = charge(lines, idle, rule)
    shuffled = list(lines)
    rnd.shuffle(shuffled)
    got = charge(shuffled, dict(reversed(list(idle.items()))), rule)
    assert got.costs.keys() == expected.costs.keys()
    for key, value in expected.costs.items():
        assert got.costs[key] == pytest.approx(value, rel=1e-9, abs=1e-9)


@given(cost_lines, idle_by_group, st.integers(min_value=1, max_value=4))
def test_team_cap_conserves_and_folds_into_other(
    lines: list[CostLine], idle: dict[str, dict[str, float]], max_teams: int
) -> None:
    ledger = charge(lines, idle, PROPORTIONAL)
    capped, folded = cap_teams(ledger, ["a"], max_teams)
    assert capped.total() == pytest.approx(ledger.total(), rel=1e-9, abs=1e-9)
    teams = {t for t, _ in capped.costs} - {"__idle__", "__unallocated__", "__other__"}
    assert len(teams) <= max(max_teams, 1)
    assert not set(folded) & teams
    if folded:
        assert any(t == "__other__" for t, _ in capped.costs)


def test_cap_keeps_biggest_spenders() -> None:
    ledger = Ledger()
    for team, amount in (("small", 1.0), ("big", 100.0), ("mid", 10.0)):
        ledger.add(team, "gpu", amount)
    capped, folded = cap_teams(ledger, [], 2)
    assert folded == ["small"]
    assert capped.costs[("__other__", "gpu")] == 1.0
    same, _ = cap_teams(ledger, [], 2, fold=folded)
    assert same.costs == capped.costs

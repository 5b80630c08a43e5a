"""Shared costs: the shared rows' money moves onto the teams by each rule, and none is lost."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.config.dimensions import SharedCostsConfig, ShareRule
from exporter.ledger.attribution import IDLE, SHARED, UNALLOCATED
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.dimensions.shared import spread_shared


def _ledger() -> Ledger:
    return Ledger(
        {
            ("a", "gpu"): 30.0,
            ("b", "cpu"): 10.0,
            (SHARED, "cpu"): 8.0,
            (SHARED, "idle_share"): 2.0,
            ("platform", "ram"): 4.0,
            (IDLE, "gpu"): 5.0,
            (UNALLOCATED, "cpu"): 1.0,
        }
    )


def test_proportional_follows_each_teams_own_cost() -> None:
    config = SharedCostsConfig(namespaces=("monitoring",), teams=("platform",))
    out = spread_shared(_ledger(), config, ["a", "b", "platform"])
    # 14 shared (8 + 2 from the namespace, 4 of the platform team), a 30 : b 10.
    assert out.costs == {
        ("a", "gpu"): 30.0,
        ("b", "cpu"): 10.0,
        (IDLE, "gpu"): 5.0,
        (UNALLOCATED, "cpu"): 1.0,
        ("a", "shared"): 10.5,
        ("b", "shared"): 3.5,
    }


def test_even_gives_every_declared_team_the_same() -> None:
    config = SharedCostsConfig(namespaces=("monitoring",), rule=ShareRule.EVEN)
    out = spread_shared(_ledger(), config, ["a", "b", "c"])
    assert {k: v for k, v in out.costs.items() if k[1] == "shared"} == {
        ("a", "shared"): pytest.approx(10 / 3),
        ("b", "shared"): pytest.approx(10 / 3),
        ("c", "shared"): pytest.approx(10 / 3),
    }
    # The platform team is not shared here: it keeps its own cost.
    assert out.costs[("platform", "ram")] == 4.0


def test_fixed_weights_reach_teams_that_spent_nothing() -> None:
    config = SharedCostsConfig(
        namespaces=("monitoring",), rule=ShareRule.FIXED, weights={"b": 1.0, "new": 3.0}
    )
    out = spread_shared(_ledger(), config, [])
    assert out.costs[("b", "shared")] == 2.5
    assert out.costs[("new", "shared")] == 7.5


def test_with_nobody_to_take_it_shared_cost_stays_unallocated() -> None:
    ledger = Ledger({(SHARED, "cpu"): 8.0, (IDLE, "gpu"): 1.0})
    out = spread_shared(ledger, SharedCostsConfig(namespaces=("m",)), [])
    assert out.costs == {(IDLE, "gpu"): 1.0, (UNALLOCATED, "shared"): 8.0}


amounts = st.floats(-1e6, 1e6, allow_nan=False)
teams = st.sampled_from(["a", "b", "platform", SHARED, IDLE, UNALLOCATED])
components = st.sampled_from(["gpu", "cpu", "lent", "llm_serving"])


@given(
    costs=st.dictionaries(st.tuples(teams, components), amounts, max_size=12),
    rule=st.sampled_from(list(ShareRule)),
)
def test_money_is_conserved_under_every_rule(
    costs: dict[tuple[str, str], float], rule: ShareRule
) -> None:
    weights = {"a": 1.0, "z": 2.0} if rule is ShareRule.FIXED else {}
    config = SharedCostsConfig(namespaces=("m",), teams=("platform",), rule=rule, weights=weights)
    ledger = Ledger(dict(costs))
    out = spread_shared(ledger, config, ["a", "b"])
    scale = sum(abs(v) for v in costs.values()) + 1.0
    assert out.total() == pytest.approx(ledger.total(), abs=1e-9 * scale)
    assert not any(team in (SHARED, "platform") for team, _ in out.costs)

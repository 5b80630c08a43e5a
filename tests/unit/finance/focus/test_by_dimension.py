"""FOCUS rows by a dimension: each row split by value, to the cent, and tagged."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from exporter.finance.focus.by_dimension import DimensionShares, dimension_shares, split_rows
from exporter.finance.focus.columns import COLUMNS, FocusRow
from exporter.ledger.attribution import OTHER, UNALLOCATED
from exporter.ledger.dimensions import DimensionCosts


def _row(team: str, component: str, cost: str, quantity: str | None = None) -> FocusRow:
    values: dict[str, Any] = {column: f"v-{column}" for column in COLUMNS}
    values.update(
        BilledCost=cost,
        ContractedCost=cost,
        EffectiveCost=cost,
        ListCost=cost,
        ConsumedQuantity=quantity,
        PricingQuantity=quantity,
        SubAccountId=team,
        x_Component=component,
        Tags=json.dumps({"team": team}),
        ChargeDescription="GPU time for team " + team,
    )
    return FocusRow(**values)


def test_a_row_is_split_by_its_teams_shares_and_tagged() -> None:
    shares = DimensionShares("product", {("a", "gpu"): {"rag": 2.0, "chat": 1.0}})
    parts = split_rows([_row("a", "gpu", "10.00", "3.0")], shares)
    assert [(p.BilledCost, p.ConsumedQuantity, json.loads(p.Tags)) for p in parts] == [
        ("3.33", "1.0", {"product": "chat", "team": "a"}),
        ("6.67", "2.0", {"product": "rag", "team": "a"}),
    ]
    assert parts[0].ChargeDescription == "GPU time for team a, product chat"
    assert parts[0].ListCost == parts[0].EffectiveCost == "3.33"


def test_a_row_without_shares_is_unallocated_and_credits_split_too() -> None:
    shares = DimensionShares("product", {("a", "lent"): {"rag": -1.0, "chat": -3.0}})
    (whole,) = split_rows([_row("b", "gpu", "1.00")], shares)
    assert json.loads(whole.Tags)["product"] == UNALLOCATED
    parts = split_rows([_row("a", "lent", "-4.00")], shares)
    assert [p.BilledCost for p in parts] == ["-3.00", "-1.00"]


def test_folded_teams_take_their_shares_into_other() -> None:
    costs = DimensionCosts(
        "p", by_team={("x", "rag", "gpu"): 1.0, ("y", "chat", "gpu"): 3.0, ("a", "rag", "gpu"): 2.0}
    )
    shares = dimension_shares(costs, ["x", "y"])
    assert shares.shares == {(OTHER, "gpu"): {"rag": 1.0, "chat": 3.0}, ("a", "gpu"): {"rag": 2.0}}


@given(
    cents=st.integers(-(10**9), 10**9),
    weights=st.lists(st.floats(1e-6, 1e6), min_size=1, max_size=6),
)
def test_the_parts_add_up_to_the_row(cents: int, weights: list[float]) -> None:
    sign = 1.0 if cents >= 0 else -1.0
    shares = DimensionShares(
        "p", {("a", "gpu"): {f"v{i}": sign * w for i, w in enumerate(weights)}}
    )
    cost = format(Decimal(cents) / 100, ".2f")
    parts = split_rows([_row("a", "gpu", cost, "7.5")], shares)
    assert sum(Decimal(p.BilledCost) for p in parts) == Decimal(cost)
    assert all(p.BilledCost == p.EffectiveCost for p in parts)

"""Fair share against the bill: a team's highest weighted share, cost shares adding to 1."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.ledger.queues.fairshare import fair_shares
from tests.support.properties import examples

TEAMS = {"cq-1": "a", "cq-2": "a", "cq-3": "b"}


def test_a_team_shows_its_highest_queue_and_nan_is_the_most_unfair() -> None:
    a, b, c = fair_shares(
        {"cq-1": 120.0, "cq-2": 400.0, "cq-3": math.nan}, {"c": 10.0}, TEAMS.__getitem__
    )
    assert (a.team, a.weighted_share, a.cost_share) == ("a", 400.0, 0.0)
    assert b.weighted_share == math.inf
    assert (c.team, c.weighted_share, c.cost_share) == ("c", None, 1.0)


def test_a_month_without_gpu_cost_has_no_cost_share() -> None:
    (a,) = fair_shares({"cq-1": 0.0}, {}, TEAMS.__getitem__)
    assert a.cost_share is None


@settings(max_examples=examples(200))
@given(st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 1e7), min_size=1))
def test_cost_shares_add_up_to_one(costs: dict[str, float]) -> None:
    shares = fair_shares({}, costs, TEAMS.__getitem__)
    if math.fsum(costs.values()) > 0:
        assert math.fsum(s.cost_share or 0.0 for s in shares) == pytest.approx(1.0)

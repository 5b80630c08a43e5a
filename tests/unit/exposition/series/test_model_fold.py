"""The model fold: `__other__` per team is exactly what it replaces, kept models untouched."""

from __future__ import annotations

import math
import random
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.exposition.series.llm import llm_usage_samples
from exporter.exposition.series.model_fold import (
    fold_alternatives,
    fold_token_costs,
    fold_usage,
)
from exporter.exposition.series.unit_economics import build_or_buy_samples, token_cost_samples
from exporter.ledger.attribution import OTHER
from exporter.ledger.llm import TeamModelUsage
from exporter.ledger.units.build_or_buy import TeamAlternative
from exporter.ledger.units.tokens import TeamTokenCost
from tests.support.properties import examples

TEAMS = st.sampled_from(["a", "b", "c", "__unallocated__"])
MODELS = st.sampled_from(["m0", "m1", "m2", "m3", "m4"])
MONEY = st.floats(min_value=0, max_value=1e9, allow_nan=False) | st.none()
COUNT = st.integers(min_value=0, max_value=10**12)
USES = st.dictionaries(
    st.tuples(TEAMS, MODELS),
    st.builds(
        TeamModelUsage, spend=MONEY, prompt_tokens=COUNT, completion_tokens=COUNT, requests=COUNT
    ),
    max_size=20,
)
FOLDED = st.frozensets(MODELS)


@settings(max_examples=examples(200))
@given(USES, FOLDED)
def test_usage_fold_conserves_every_figure_per_team(
    usage: dict[tuple[str, str], TeamModelUsage], folded: frozenset[str]
) -> None:
    got = fold_usage(usage, folded)
    assert all(model not in folded for _, model in got if model != OTHER)
    for key, use in usage.items():
        if key[1] not in folded:
            assert got[key] is use
    gone: dict[str, list[TeamModelUsage]] = defaultdict(list)
    for (team, model), use in usage.items():
        if model in folded:
            gone[team].append(use)
    assert {team for team, model in got if model == OTHER} == set(gone)
    for team, uses in gone.items():
        other = got[(team, OTHER)]
        spends = [u.spend for u in uses]
        known = None if None in spends else math.fsum(s for s in spends if s is not None)
        assert other.spend == known  # exactly the sum, or unknown when any part is
        assert other.prompt_tokens == sum(u.prompt_tokens for u in uses)
        assert other.completion_tokens == sum(u.completion_tokens for u in uses)
        assert other.requests == sum(u.requests for u in uses)


@settings(max_examples=examples(100))
@given(USES, FOLDED, st.randoms(use_true_random=False))
def test_usage_fold_ignores_the_order_upstream_gave(
    usage: dict[tuple[str, str], TeamModelUsage], folded: frozenset[str], rnd: random.Random
) -> None:
    items = list(usage.items())
    rnd.shuffle(items)
    assert dict(fold_usage(dict(items), folded)) == dict(fold_usage(usage, folded))


def test_usage_series_of_a_fold_sum_to_the_unfolded_ones() -> None:
    usage = {
        ("a", "m0"): TeamModelUsage(0.1, 1, 2, 3),
        ("a", "m1"): TeamModelUsage(0.2, 4, 5, 6),
        ("a", "m2"): TeamModelUsage(0.7, 7, 8, 9),
        ("b", "m1"): TeamModelUsage(None, 1, 1, 1),
    }
    got = {
        (s.family.base, s.labels): s.value
        for s in llm_usage_samples(fold_usage(usage, {"m1", "m2"}))
    }
    spend = "llm_spend_month_to_date"
    assert got[(spend, (("team", "a"), ("model", "m0")))] == 0.1
    assert got[(spend, (("team", "a"), ("model", OTHER)))] == math.fsum([0.2, 0.7])
    assert (spend, (("team", "b"), ("model", OTHER))) not in got  # an unknown part: unknown
    requests = "llm_requests_month_to_date"
    assert got[(requests, (("team", "b"), ("model", OTHER)))] == 1
    assert not any(("model", "m1") in labels or ("model", "m2") in labels for _, labels in got)


def _cost(team: str, model: str, cost: float | None, kind: str = "external") -> TeamTokenCost:
    return TeamTokenCost(team, model, kind, 1_000_000, 1_000_000, 4, cost)


def test_token_costs_fold_rebuilds_the_ratios_from_the_sums() -> None:
    teams = [
        _cost("a", "m1", 3.0),
        _cost("a", "m0", 1.0),
        _cost("a", "m2", 5.0, kind="self_hosted"),
        _cost("b", "m2", None),
    ]
    got = {(t.team, t.model): t for t in fold_token_costs(teams, {"m1", "m2"})}
    assert set(got) == {("a", "m0"), ("a", OTHER), ("b", OTHER)}
    other = got[("a", OTHER)]
    assert (other.cost, other.tokens, other.requests, other.kind) == (8.0, 4_000_000, 8, "mixed")
    assert other.per_million == 2.0
    assert other.per_request == 1.0
    assert got[("b", OTHER)].cost is None
    samples = token_cost_samples((), fold_token_costs(teams, {"m1", "m2"}))
    assert {dict(s.labels)["model"] for s in samples} == {"m0", OTHER}


def test_nothing_folded_leaves_the_rows_as_they_came() -> None:
    teams = [_cost("b", "m1", 1.0), _cost("a", "m0", 2.0)]
    assert fold_token_costs(teams, frozenset()) == teams
    alternatives = [TeamAlternative("b", "m1", 1.0, 2.0)]
    assert fold_alternatives(alternatives, frozenset()) == alternatives


@settings(max_examples=examples(200))
@given(
    st.lists(
        st.builds(
            TeamAlternative,
            TEAMS,
            MODELS,
            MONEY,
            st.floats(min_value=0, max_value=1e9, allow_nan=False),
        ),
        max_size=20,
        unique_by=lambda t: (t.team, t.model),
    ),
    FOLDED,
)
def test_alternatives_fold_conserves_money(
    teams: list[TeamAlternative], folded: frozenset[str]
) -> None:
    got = fold_alternatives(teams, folded)
    by_team: dict[str, list[float]] = defaultdict(list)
    for t in teams:
        if t.model in folded:
            by_team[t.team].append(t.alternative)
    others = {t.team: t for t in got if t.model == OTHER}
    assert {team: o.alternative for team, o in others.items()} == {
        team: math.fsum(v) for team, v in by_team.items()
    }
    kept = sorted((t.team, t.model) for t in got if t.model != OTHER)
    assert kept == sorted((t.team, t.model) for t in teams if t.model not in folded)
    names = {dict(s.labels)["model"] for s in build_or_buy_samples(got, ())}
    assert not names & folded

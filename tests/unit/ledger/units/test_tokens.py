"""Cost per million tokens and per request: the article's identity, a hand-worked month, and
conservation of the serving cost whatever the weight."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import Config, ModelDecl, SelfHosted, TeamConfig
from exporter.exposition.series.unit_economics import token_cost_samples
from exporter.ledger.attribution import Attributor
from exporter.ledger.llm import route
from exporter.ledger.units.tokens import (
    cost_per_million_tokens,
    per_million,
    token_costs,
    weight_of,
)
from exporter.sources.litellm.snapshot import ModelUsage
from tests.support.properties import examples

TEAMS = (
    TeamConfig(name="research", litellm_teams=("research",)),
    TeamConfig(name="search", namespaces=("ns-serving",), litellm_teams=("search",)),
)
MODELS = (
    ModelDecl(model="llama-3-70b", self_hosted=SelfHosted(namespace="ns-serving")),
    ModelDecl(model="mistral-7b", self_hosted=SelfHosted(namespace="ns-serving")),
    ModelDecl(model="gpt-4o", external=True),
)
CONFIG = Config(teams=TEAMS, llm_models=MODELS, llm_completion_weight=3.0)
ATTRIBUTOR = Attributor(CONFIG)


def test_the_articles_identity() -> None:
    # 5.60 an hour at 2,000 tokens/s: 5.60 / 7,200,000 x 1,000,000 = 0.7778.
    assert cost_per_million_tokens(5.60, 2_000) == pytest.approx(0.78, abs=0.005)
    # The issue's own check: 11 an hour at 2,800 tokens/s is 1.09 per million.
    assert cost_per_million_tokens(11.0, 2_800) == pytest.approx(1.09, abs=0.005)
    assert per_million(None, 10) is None and per_million(1.0, 0) is None


def _usage() -> list[ModelUsage]:
    return [
        # research: 600k prompt + 200k completion of llama, 100 requests; LiteLLM says 1.60.
        ModelUsage("research", "research", "llama-3-70b", 1.60, 600_000, 200_000, 100),
        # search: 200k + 0 of llama (its own model), 50 requests; LiteLLM says 0.40.
        ModelUsage("search", "search", "llama-3-70b", 0.40, 200_000, 0, 50),
        # research: gpt-4o, 1,000,000 + 250,000 tokens, 8.75 billed, 250 requests.
        ModelUsage("research", "research", "gpt-4o", 8.75, 1_000_000, 250_000, 250),
    ]


def test_a_hand_worked_month() -> None:
    # ns-serving cost 120 this month, all placed on search.
    serving = {"ns-serving": {"search": 120.0}}
    routed = route(_usage(), MODELS, ATTRIBUTOR)
    models, teams = token_costs(routed, serving, weight_of(CONFIG))
    by_team = {(t.team, t.model): t for t in teams}
    # Weighted tokens (w = 3): research 600k + 3 x 200k = 1.2M, search 200k; total 1.4M.
    # research's share: 120 x 1.2 / 1.4 = 102.857; over 800k tokens: 128.57 per million;
    # over 100 requests: 1.0286 each. search: 120 x 0.2 / 1.4 = 17.143 over 200k: 85.71.
    research = by_team[("research", "llama-3-70b")]
    assert research.cost == pytest.approx(102.857, abs=1e-3)
    assert research.per_million == pytest.approx(128.571, abs=1e-3)
    assert research.per_request == pytest.approx(1.02857, abs=1e-5)
    assert by_team[("search", "llama-3-70b")].per_million == pytest.approx(85.714, abs=1e-3)
    # External: what the team paid: 8.75 over 1.25M tokens = 7.00 per million, 0.035 a request.
    gpt = by_team[("research", "gpt-4o")]
    assert (gpt.kind, gpt.per_million, gpt.per_request) == ("external", 7.0, 0.035)
    llama = {m.model: m for m in models}["llama-3-70b"]
    # Declared: LiteLLM's 2.00 over 1M tokens = 2.00 per million; measured: 120 over 1M = 120.
    assert llama.declared_per_million == pytest.approx(2.0)
    assert llama.measured_per_million == pytest.approx(120.0)
    assert llama.measured_per_request == pytest.approx(0.8)
    values = {(s.family.base, s.labels): s.value for s in token_cost_samples(models, teams)}
    key = ("llm_cost_per_million_tokens", (("model", "llama-3-70b"), ("basis", "measured")))
    assert values[key] == pytest.approx(120.0)
    team_key = (("team", "research"), ("model", "gpt-4o"))
    assert values[("team_llm_cost_per_million_tokens", team_key)] == 7.0
    assert values[("team_llm_cost_per_request", team_key)] == 0.035


def test_without_opencost_a_self_hosted_cost_is_unknown_and_left_out() -> None:
    routed = route(_usage(), MODELS, ATTRIBUTOR)
    models, teams = token_costs(routed, None, weight_of(CONFIG))
    assert {t.model: t.cost for t in teams if t.team == "search"} == {"llama-3-70b": None}
    names = {s.labels for s in token_cost_samples(models, teams)}
    assert (("team", "search"), ("model", "llama-3-70b")) not in names


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["research", "search", None]),
            st.sampled_from(["llama-3-70b", "mistral-7b"]),
            st.integers(0, 10**7),
            st.integers(0, 10**7),
        ),
        min_size=1,
        max_size=8,
    ),
    st.floats(0.1, 20.0),
    st.floats(0.0, 1e5),
)
def test_the_teams_costs_add_up_to_the_serving_cost_whatever_the_weight(
    rows: list[tuple[str | None, str, int, int]], weight: float, cost: float
) -> None:
    usage = [ModelUsage(team, team, model, None, p, c, 1) for team, model, p, c in rows]
    routed = route(usage, MODELS, ATTRIBUTOR)
    serving = {"ns-serving": {"search": cost}}
    models, teams = token_costs(routed, serving, lambda _m: weight)
    if sum(p + weight * c for _, _, p, c in rows) <= 0:
        assert all(t.cost is None for t in teams)
        return
    assert sum(t.cost or 0.0 for t in teams) == pytest.approx(cost, rel=1e-9, abs=1e-6)
    assert sum(m.measured or 0.0 for m in models) == pytest.approx(cost, rel=1e-9, abs=1e-6)


def test_a_models_own_weight_before_the_configured_one() -> None:
    # The ledger's LLM step moves serving cost by a model's measured weight when it has one;
    # the token costs weigh the same way, or a team's cost per million would not foot.
    weight = weight_of(CONFIG, {"llama-3-70b": 30.0})
    assert weight("llama-3-70b") == 30.0
    assert weight("mistral-7b") == 3.0

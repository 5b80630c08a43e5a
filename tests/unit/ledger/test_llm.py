"""LLM chargeback: conservation of apply_llm, no double counting, drift maths, and samples."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import (
    AttributionConfig,
    BudgetConfig,
    Config,
    ModelDecl,
    SelfHosted,
    TeamConfig,
)
from exporter.exposition.catalogue import (
    LLM_UNKNOWN_MODELS,
    TEAM_BUDGET,
)
from exporter.exposition.samples import Sample
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.ledger.chargeback import Ledger, cap_teams
from exporter.ledger.join import budget_samples, config_budgets
from exporter.ledger.llm import (
    LlmReport,
    apply_llm,
    llm_budget_state_samples,
    llm_pricing_samples,
    llm_report_samples,
    llm_usage_samples,
    model_pricing,
    route,
    team_model_usage,
)
from exporter.sources.litellm.source import ModelUsage, TeamBudget

TEAMS = (
    TeamConfig(name="research", litellm_teams=("9f3c2a10-research",), budget=BudgetConfig(llm=400)),
    TeamConfig(name="vision", litellm_teams=("vision",)),
    TeamConfig(name="search", namespaces=("ns-search",), litellm_teams=("c0a8d9e3-search",)),
)
ATTRIBUTOR = Attributor(Config(teams=TEAMS))
MODELS = (
    ModelDecl(model="llama-3-70b", self_hosted=SelfHosted(namespace="ns-search")),
    ModelDecl(model="mistral-7b", self_hosted=SelfHosted(namespace="ns-search")),
    ModelDecl(model="qwen-32b", self_hosted=SelfHosted(namespace="ns-other")),
    ModelDecl(model="gpt-4o", external=True),
)
LITELLM_TEAMS: list[tuple[str | None, str | None]] = [
    ("9f3c2a10-research", "research"),
    ("b71e44d2-vision", "vision"),
    ("c0a8d9e3-search", None),
    ("stranger", None),
    (None, None),
]


def _use(
    team: tuple[str | None, str | None],
    model: str,
    prompt: int,
    completion: int,
    spend: float | None,
    requests: int = 1,
) -> ModelUsage:
    return ModelUsage(team[0], team[1], model, spend, prompt, completion, requests)


RESEARCH, VISION, SEARCH, STRANGER, NOBODY = LITELLM_TEAMS


def _values(samples: list[Sample]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.family.base, s.labels): s.value for s in samples}


# --- conservation ----------------------------------------------------------------------------

money = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
usage_records = st.lists(
    st.builds(
        _use,
        st.sampled_from(LITELLM_TEAMS),
        st.sampled_from(["llama-3-70b", "mistral-7b", "qwen-32b", "gpt-4o", "mystery-model"]),
        st.integers(0, 10**9),
        st.integers(0, 10**9),
        st.one_of(st.none(), money),
    ),
    max_size=25,
)
serving = st.dictionaries(
    st.sampled_from(["ns-search", "ns-other", "ns-unused"]),
    st.dictionaries(st.sampled_from(["search", "research", UNALLOCATED]), money, max_size=3),
    max_size=3,
)
ledgers = st.dictionaries(
    st.tuples(st.sampled_from(["research", "vision", "search", "__idle__"]), st.just("gpu")),
    money,
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(
    ledgers,
    usage_records,
    serving,
    st.floats(0.1, 10),
    st.sampled_from([1.0, 1 / 457.5, 1 / 3.0]),
)
def test_apply_llm_conserves_money(
    costs: dict[tuple[str, str], float],
    usage: list[ModelUsage],
    serving_cost: dict[str, dict[str, float]],
    weight: float,
    scale: float,
) -> None:
    before = Ledger(dict(costs))
    after, report = apply_llm(before, usage, MODELS, ATTRIBUTOR, serving_cost, weight, scale)
    external = sum(
        u.spend * scale
        for u in usage
        if u.spend is not None and u.model in {"gpt-4o", "mystery-model"}
    )
    scale_of = max(1.0, before.total(), external, *(sum(v.values()) for v in serving_cost.values()))
    assert report.external_spend == pytest.approx(external, rel=1e-9, abs=1e-9 * scale_of)
    assert after.total() == pytest.approx(
        before.total() + report.external_spend, rel=1e-9, abs=1e-9 * scale_of
    )
    serving_sum = sum(v for (_, c), v in after.costs.items() if c == "llm_serving")
    assert abs(serving_sum) <= 1e-9 * scale_of
    assert before.costs == costs  # the input ledger is not changed
    assert ("mystery-model" in report.unknown_models) == any(
        u.model == "mystery-model" for u in usage
    )


def test_self_hosted_spend_is_never_added() -> None:
    usage = [_use(RESEARCH, "llama-3-70b", 1000, 100, 5000.0)]
    ledger = Ledger({("search", "gpu"): 10.0})
    after, report = apply_llm(ledger, usage, MODELS, ATTRIBUTOR, {"ns-search": {}}, 1.0, 1.0)
    # LiteLLM's internal price for a self-hosted model is not money: nothing new appears.
    assert after.costs == {("search", "gpu"): 10.0}
    assert report.external_spend == 0.0


def test_self_hosted_serving_cost_follows_weighted_tokens() -> None:
    usage = [
        _use(RESEARCH, "llama-3-70b", 600, 200, 0.3),
        _use(VISION, "llama-3-70b", 100, 50, 0.06),
        _use(SEARCH, "mistral-7b", 0, 0, 0.0),
        _use(VISION, "gpt-4o", 10, 10, 2.0),
    ]
    ledger = Ledger({("search", "gpu"): 120.0})
    after, report = apply_llm(
        ledger, usage, MODELS, ATTRIBUTOR, {"ns-search": {"search": 120.0}}, 2.0, 0.5
    )
    # Weighted tokens: research 600 + 2 x 200 = 1000, vision 100 + 2 x 50 = 200.
    assert after.costs[("search", "llm_serving")] == -120.0
    assert after.costs[("research", "llm_serving")] == pytest.approx(100.0)
    assert after.costs[("vision", "llm_serving")] == pytest.approx(20.0)
    assert after.costs[("vision", "llm_external")] == 1.0  # 2.0 x llm_scale
    assert report == LlmReport((), 1.0, {"ns-search": 120.0}, ())


def test_serving_team_that_also_consumes_nets_out() -> None:
    usage = [_use(SEARCH, "llama-3-70b", 300, 0, None), _use(RESEARCH, "llama-3-70b", 100, 0, None)]
    after, _ = apply_llm(
        Ledger(), usage, MODELS, ATTRIBUTOR, {"ns-search": {"search": 8.0}}, 1.0, 1.0
    )
    assert after.costs[("search", "llm_serving")] == pytest.approx(-2.0)
    assert after.costs[("research", "llm_serving")] == pytest.approx(2.0)


def test_no_tokens_leaves_serving_cost_in_place() -> None:
    after, report = apply_llm(
        Ledger({("search", "gpu"): 5.0}),
        [_use(RESEARCH, "gpt-4o", 1, 1, 0.5)],
        MODELS,
        ATTRIBUTOR,
        {"ns-search": {"search": 5.0}},
        1.0,
        1.0,
    )
    assert ("search", "llm_serving") not in after.costs
    assert report.moved == {}


def test_unknown_and_unpriced_models_are_reported() -> None:
    usage = [
        _use(STRANGER, "mystery-model", 10, 10, 0.25),
        _use(NOBODY, "gpt-4o", 10, 10, None),
    ]
    after, report = apply_llm(Ledger(), usage, MODELS, ATTRIBUTOR, {}, 1.0, 1.0)
    assert report.unknown_models == ("mystery-model",)
    assert report.unpriced_models == ("gpt-4o",)
    assert after.costs == {("stranger", "llm_external"): 0.25}
    assert llm_report_samples(report) == [Sample.of(LLM_UNKNOWN_MODELS, 1.0)]


# --- pricing drift ---------------------------------------------------------------------------


def test_drift_and_recommended_prices_on_a_hand_computed_case() -> None:
    usage = [
        _use(RESEARCH, "llama-3-70b", 600, 200, 0.3),
        _use(VISION, "llama-3-70b", 100, 50, 0.06),
        _use(VISION, "gpt-4o", 10, 10, 2.0),
    ]
    serving = {"ns-search": {"search": 100.0, "x": 20.0}}
    samples = llm_pricing_samples(model_pricing(usage, MODELS, serving, 2.0))
    got = _values(samples)
    model = ("model", "llama-3-70b")
    # W = 1000 + 200 = 1200 weighted tokens; LiteLLM charged 0.36 for them.
    assert got[("llm_cost_per_token", (model, ("basis", "declared")))] == pytest.approx(0.0003)
    # Measured: 120 of serving cost / 1200 = 0.1; input = 0.1, output = w x input = 0.2, so
    # 700 x 0.1 + 250 x 0.2 = 120 recovers the cost.
    assert got[("llm_cost_per_token", (model, ("basis", "measured")))] == pytest.approx(0.1)
    assert got[("llm_recommended_cost_per_token", (model, ("direction", "input")))] == (
        pytest.approx(0.1)
    )
    assert got[("llm_recommended_cost_per_token", (model, ("direction", "output")))] == (
        pytest.approx(0.2)
    )
    assert len(samples) == 4  # nothing for the external model


def test_drift_skips_declared_when_spend_is_unknown() -> None:
    usage = [_use(RESEARCH, "qwen-32b", 10, 0, None)]
    pricing = model_pricing(usage, MODELS, {"ns-other": {"search": 1.0}}, 1.0)
    got = _values(llm_pricing_samples(pricing))
    assert set(got) == {
        ("llm_cost_per_token", (("model", "qwen-32b"), ("basis", "measured"))),
        ("llm_recommended_cost_per_token", (("model", "qwen-32b"), ("direction", "input"))),
        ("llm_recommended_cost_per_token", (("model", "qwen-32b"), ("direction", "output"))),
    }


# --- samples ---------------------------------------------------------------------------------


def test_usage_samples_attribute_and_sum() -> None:
    usage = [
        _use(RESEARCH, "gpt-4o", 10, 5, 1.5, 3),
        _use(STRANGER, "gpt-4o", 1, 1, 0.5, 1),
        _use(NOBODY, "gpt-4o", 2, 2, 0.25, 2),
        _use(SEARCH, "llama-3-70b", 7, 3, None, 4),
    ]
    got = _values(llm_usage_samples(team_model_usage(usage, ATTRIBUTOR)))
    un = ("team", UNALLOCATED)
    gpt = ("model", "gpt-4o")
    # A team without an alias is its own team by id; only the row with no team is unallocated.
    assert got[("llm_spend_month_to_date", (un, gpt))] == 0.25
    assert got[("llm_spend_month_to_date", (("team", "stranger"), gpt))] == 0.5
    assert got[("llm_tokens_month_to_date", (un, gpt, ("direction", "prompt")))] == 2
    assert got[("llm_requests_month_to_date", (("team", "research"), gpt))] == 3
    llama = (("team", "search"), ("model", "llama-3-70b"))
    # Unknown spend: no spend series, tokens still exported.
    assert ("llm_spend_month_to_date", llama) not in got
    assert got[("llm_tokens_month_to_date", (*llama, ("direction", "completion")))] == 3


def test_budget_state_samples() -> None:
    reset = datetime(2026, 12, 1, tzinfo=UTC)
    teams = [
        TeamBudget("b71e44d2-vision", "vision", 120.0, 150.0, 100.0, reset),
        TeamBudget("c0a8d9e3-search", None, 8.0, None, None, None),
        TeamBudget("stranger", None, 1.0, 10.0, None, None),
        TeamBudget("another", None, 2.0, None, None, None),
    ]
    got = _values(llm_budget_state_samples(teams, ATTRIBUTOR))
    assert got == {
        ("llm_budget_spend", (("team", "stranger"),)): 1.0,
        ("llm_budget_max", (("team", "stranger"),)): 10.0,
        ("llm_budget_spend", (("team", "another"),)): 2.0,
        ("llm_budget_spend", (("team", "search"),)): 8.0,
        ("llm_budget_spend", (("team", "vision"),)): 120.0,
        ("llm_budget_max", (("team", "vision"),)): 150.0,
        ("llm_budget_soft", (("team", "vision"),)): 100.0,
        ("llm_budget_reset_timestamp_seconds", (("team", "vision"),)): reset.timestamp(),
    }


def test_config_llm_budgets() -> None:
    budgets = config_budgets(Config(teams=TEAMS))
    assert list(budget_samples(budgets)) == [
        Sample.of(TEAM_BUDGET, 400.0, team="research", kind="llm")
    ]


def test_undeclared_alias_is_its_own_team_and_the_cap_folds_it() -> None:
    usage = [
        _use(("5d2e-uuid", "Growth Team"), "gpt-4o", 10, 10, 3.0),
        _use(("6e3f-uuid", "Ads"), "gpt-4o", 10, 10, 1.0),
        _use(("7f40-uuid", "__idle__"), "gpt-4o", 10, 10, 0.5),
        _use(NOBODY, "gpt-4o", 10, 10, 0.25),
    ]
    after, report = apply_llm(Ledger(), usage, MODELS, ATTRIBUTOR, {}, 1.0, 1.0)
    # Aliases normalised into teams; a reserved-looking alias names nothing, so the team is
    # its id; only a null team owns nothing.
    assert after.costs == {
        ("growth-team", "llm_external"): 3.0,
        ("ads", "llm_external"): 1.0,
        ("7f40-uuid", "llm_external"): 0.5,
        (UNALLOCATED, "llm_external"): 0.25,
    }
    # max_teams = 4 leaves room for one undeclared team next to the 3 declared: the largest
    # spender stays, the others fold into __other__ with their money.
    capped, folded = cap_teams(after, [t.name for t in TEAMS], 4)
    assert folded == ["7f40-uuid", "ads"]
    assert capped.costs[("__other__", "llm_external")] == 1.5
    assert capped.total() == after.total() == report.external_spend == 4.75


def test_strict_teams_keeps_undeclared_aliases_unallocated() -> None:
    strict = Attributor(Config(teams=TEAMS, attribution=AttributionConfig(strict_teams=True)))
    usage = [_use(("5d2e-uuid", "Growth Team"), "gpt-4o", 10, 10, 3.0)]
    after, _ = apply_llm(Ledger(), usage, MODELS, strict, {}, 1.0, 1.0)
    assert after.costs == {(UNALLOCATED, "llm_external"): 3.0}


# --- public names and deployments ------------------------------------------------------------

LLAMA_DEPLOYMENT = "hosted_vllm/meta-llama/Meta-Llama-3-70B-Instruct"


def _named(
    team: tuple[str | None, str | None], group: str, deployment: str, **kw: float
) -> ModelUsage:
    return ModelUsage(
        team[0], team[1], group, kw.get("spend", 1.0), int(kw.get("prompt", 100)), 0, 1, deployment
    )


def test_a_model_declared_by_public_name_is_matched_through_model_group() -> None:
    # LiteLLM reports the provider model beside the public name: the declaration by public
    # name still makes it self-hosted, so its internal price of 5.0 is never billed.
    usage = [_named(RESEARCH, "llama-3-70b", LLAMA_DEPLOYMENT, spend=5.0, prompt=300)]
    after, report = apply_llm(
        Ledger({("search", "gpu"): 12.0}),
        usage,
        MODELS,
        ATTRIBUTOR,
        {"ns-search": {"search": 12.0}},
        1.0,
        1.0,
    )
    assert after.costs == {
        ("search", "gpu"): 12.0,
        ("search", "llm_serving"): -12.0,
        ("research", "llm_serving"): 12.0,
    }
    assert report == LlmReport((), 0.0, {"ns-search": 12.0}, ())
    got = _values(llm_usage_samples(team_model_usage(usage, ATTRIBUTOR)))
    assert got[("llm_spend_month_to_date", (("team", "research"), ("model", "llama-3-70b")))] == 5.0


def test_a_deployment_declaration_wins_over_its_public_name() -> None:
    # "gpt-4o" is declared external, but one deployment behind it is our own vLLM.
    models = (
        *MODELS,
        ModelDecl(model="hosted_vllm/gpt-4o-distill", self_hosted=SelfHosted(namespace="ns-other")),
    )
    usage = [
        _named(VISION, "gpt-4o", "azure/gpt-4o-2024-08-06", spend=2.0, prompt=10),
        _named(VISION, "gpt-4o", "hosted_vllm/gpt-4o-distill", spend=0.5, prompt=40),
    ]
    after, report = apply_llm(
        Ledger(), usage, models, ATTRIBUTOR, {"ns-other": {"search": 4.0}}, 1.0, 1.0
    )
    # Only the Azure deployment is new money; the self-hosted one moves ns-other's 4.0.
    assert after.costs == {
        ("vision", "llm_external"): 2.0,
        ("search", "llm_serving"): -4.0,
        ("vision", "llm_serving"): 4.0,
    }
    assert report.unknown_models == ()
    # Pricing drift is labelled by the public name: 4.0 over 40 weighted tokens.
    pricing = model_pricing(usage, models, {"ns-other": {"search": 4.0}}, 1.0)
    assert [(p.model, p.declared, p.measured) for p in pricing] == [("gpt-4o", 0.5 / 40, 0.1)]


def test_an_undeclared_model_is_reported_by_its_public_name() -> None:
    usage = [_named(VISION, "claude-sonnet", "bedrock/anthropic.claude-sonnet-v2", spend=0.75)]
    after, report = apply_llm(Ledger(), usage, MODELS, ATTRIBUTOR, {}, 1.0, 1.0)
    assert report.unknown_models == ("claude-sonnet",)
    assert after.costs == {("vision", "llm_external"): 0.75}


@settings(max_examples=100, deadline=None)
@given(usage_records, serving, st.floats(0.1, 10))
def test_routed_usage_gives_what_the_records_give(
    usage: list[ModelUsage], serving_cost: dict[str, dict[str, float]], weight: float
) -> None:
    # The join routes a LiteLLM snapshot once and hands the routes to every step.
    routed = route(usage, MODELS, ATTRIBUTOR)
    ledger = Ledger({("search", "gpu"): 50.0})
    direct = apply_llm(ledger, usage, MODELS, ATTRIBUTOR, serving_cost, weight, 0.5)
    assert apply_llm(ledger, routed, MODELS, ATTRIBUTOR, serving_cost, weight, 0.5) == direct
    pricing = model_pricing(usage, MODELS, serving_cost, weight)
    assert model_pricing(routed, MODELS, serving_cost, weight) == pricing
    assert team_model_usage(routed, ATTRIBUTOR) == team_model_usage(usage, ATTRIBUTOR)

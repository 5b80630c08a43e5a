"""LLM money into the ledger: conservation of apply_llm, no double counting, serving cost moved."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import (
    AttributionConfig,
    Config,
)
from exporter.exposition.catalogue.llm import LLM_UNKNOWN_MODELS
from exporter.exposition.samples import Sample
from exporter.exposition.series.llm import unknown_model_samples
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.ledger.costs.ledger import Ledger, cap_teams
from exporter.ledger.llm.reattribution import LlmReport, apply_llm
from exporter.sources.litellm.snapshot import ModelUsage
from tests.support.properties import examples
from tests.unit.ledger.llm.test_routing import (
    ATTRIBUTOR,
    MODELS,
    NOBODY,
    RESEARCH,
    SEARCH,
    STRANGER,
    TEAMS,
    VISION,
    _use,
    money,
    serving,
    usage_records,
)

ledgers = st.dictionaries(
    st.tuples(st.sampled_from(["research", "vision", "search", "__idle__"]), st.just("gpu")),
    money,
    max_size=4,
)


@settings(max_examples=examples(300), deadline=None)
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
    assert unknown_model_samples(report.unknown_models) == [Sample.of(LLM_UNKNOWN_MODELS, 1.0)]


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

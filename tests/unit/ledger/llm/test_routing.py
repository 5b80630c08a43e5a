"""LLM routing: public names and deployments, and routed usage giving what the records give."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import (
    BudgetConfig,
    Config,
    ModelDecl,
    SelfHosted,
    TeamConfig,
)
from exporter.exposition.samples import Sample
from exporter.exposition.series.llm import llm_usage_samples
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.llm.pricing import model_pricing
from exporter.ledger.llm.reattribution import LlmReport, apply_llm
from exporter.ledger.llm.routing import route
from exporter.ledger.llm.usage import team_model_usage
from exporter.sources.litellm.snapshot import ModelUsage
from tests.support.properties import examples

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


@settings(max_examples=examples(100), deadline=None)
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

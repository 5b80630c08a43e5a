"""Build or buy: a hand-worked alternative at list prices and at a LiteLLM model's price, and the
break-even."""

from __future__ import annotations

import pytest

from exporter.config.schema import Config
from exporter.exposition.series.unit_economics import build_or_buy_samples
from exporter.ledger.units.build_or_buy import BreakEven, build_or_buy, namespace_utilisation
from exporter.ledger.units.tokens import ModelTokenCost, TeamTokenCost
from exporter.sources.dcgm.records import GpuRecord

CONFIG = Config.model_validate(
    {
        "llm_models": [
            {
                "model": "llama-3-70b",
                "self_hosted": {"namespace": "ns-serving"},
                "alternative": {"input_per_million": 2.5, "output_per_million": 10},
            },
            {
                "model": "mistral-7b",
                "self_hosted": {"namespace": "ns-serving"},
                "alternative": {"litellm_model": "gpt-4o-mini"},
            },
            {"model": "gpt-4o-mini", "external": True},
        ]
    }
)
MODELS = (
    ModelTokenCost("llama-3-70b", "self_hosted", 800_000, 200_000, 150, 2.0, 120.0),
    ModelTokenCost("mistral-7b", "self_hosted", 1_000_000, 0, 10, None, 3.0),
    # The proxy charged 0.90 for 1.5M tokens of gpt-4o-mini: 0.60 per million, blended.
    ModelTokenCost("gpt-4o-mini", "external", 1_000_000, 500_000, 10, 0.90, None),
)
TEAMS = (
    TeamTokenCost("research", "llama-3-70b", "self_hosted", 600_000, 200_000, 100, 102.857),
    TeamTokenCost("search", "llama-3-70b", "self_hosted", 200_000, 0, 50, 17.143),
    TeamTokenCost("research", "mistral-7b", "self_hosted", 1_000_000, 0, 10, 3.0),
    TeamTokenCost("research", "gpt-4o-mini", "external", 1_000_000, 500_000, 10, 0.90),
)


def test_a_hand_worked_build_or_buy() -> None:
    records = [
        GpuRecord("n1", "0", "u0", "H100", namespace="ns-serving", pod="p", utilisation=0.30),
        GpuRecord("n1", "1", "u1", "H100", namespace="ns-serving", pod="q", utilisation=0.10),
    ]
    use = namespace_utilisation(records)
    assert use == {"ns-serving": pytest.approx(0.20)}
    teams, even = build_or_buy(CONFIG, MODELS, TEAMS, use)
    alt = {(t.team, t.model): t.alternative for t in teams}
    # research: 600k x 2.50/M + 200k x 10/M = 1.50 + 2.00 = 3.50; search: 200k x 2.50/M = 0.50.
    assert alt[("research", "llama-3-70b")] == pytest.approx(3.50)
    assert alt[("search", "llama-3-70b")] == pytest.approx(0.50)
    # mistral at gpt-4o-mini's blended 0.60 per million: 1M tokens = 0.60.
    assert alt[("research", "mistral-7b")] == pytest.approx(0.60)
    assert ("research", "gpt-4o-mini") not in alt
    llama, mistral = even
    # llama: 120 self-hosted against 4.00 bought: 30 x today's volume; at 20 % utilisation
    # today, break-even needs 600 % (not reachable). mistral: 3.00 against 0.60: 5 x.
    assert (llama.model, llama.alternative_name) == ("llama-3-70b", "list price")
    assert llama.ratio == pytest.approx(30.0)
    assert llama.utilisation_at_break_even == pytest.approx(6.0)
    assert mistral.alternative_name == "gpt-4o-mini" and mistral.ratio == pytest.approx(5.0)
    values = {(s.family.base, s.labels): s.value for s in build_or_buy_samples(teams, even)}
    assert values[("llm_break_even_ratio", (("model", "llama-3-70b"),))] == pytest.approx(30.0)
    assert values[("llm_break_even_utilization_ratio", (("model", "mistral-7b"),))] == (
        pytest.approx(1.0)
    )
    labels = (("team", "search"), ("model", "llama-3-70b"))
    key = ("team_llm_alternative_cost_month_to_date", labels)
    assert values[key] == pytest.approx(0.50)


def test_an_unpriced_litellm_alternative_gives_nothing() -> None:
    models = (MODELS[0], MODELS[1], ModelTokenCost("gpt-4o-mini", "external", 5, 5, 1, None, None))
    teams, even = build_or_buy(CONFIG, models, TEAMS, {})
    assert {t.model for t in teams} == {"llama-3-70b"}
    assert [b.model for b in even] == ["llama-3-70b"]
    assert even[0].utilisation_at_break_even is None


def test_no_alternative_cost_means_no_ratio() -> None:
    assert BreakEven("m", "list price", 1.0, 0.0, 0.5).ratio is None

"""LLM usage and budget samples: attributed and summed per team, budgets from LiteLLM and config."""

from __future__ import annotations

from datetime import UTC, datetime

from exporter.config.schema import (
    Config,
)
from exporter.exposition.catalogue.costs import TEAM_BUDGET
from exporter.exposition.samples import Sample
from exporter.exposition.series.costs import budget_samples
from exporter.exposition.series.llm import llm_budget_samples, llm_usage_samples
from exporter.ledger.attribution import UNALLOCATED
from exporter.ledger.costs.budgets import config_budgets
from exporter.ledger.llm.usage import team_llm_budgets, team_model_usage
from exporter.sources.litellm.snapshot import TeamBudget
from tests.unit.ledger.llm.test_routing import (
    ATTRIBUTOR,
    NOBODY,
    RESEARCH,
    SEARCH,
    STRANGER,
    TEAMS,
    _use,
    _values,
)


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
    got = _values(llm_budget_samples(team_llm_budgets(teams, ATTRIBUTOR)))
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

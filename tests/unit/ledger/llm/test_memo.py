"""The LLM part's memo: along a run of refreshes, each part equals `llm_part` of its snapshot."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.ledger.llm.memo import LlmMemo, llm_part
from exporter.sources.litellm.snapshot import LiteLLMSnapshot, ModelUsage, TeamBudget
from tests.support.properties import examples
from tests.unit.ledger.llm.test_routing import ATTRIBUTOR, LITELLM_TEAMS, MODELS, money

# One name and two teams drawn often, so that several records sum into one (team, model) and
# the order of their float additions shows.
MODEL_NAMES = ["gpt-4o", "gpt-4o", "gpt-4o", "llama-3-70b", "mistral-7b", "qwen-32b", "mystery"]
DEPLOYMENTS = ["", "hosted_vllm/llama", "azure/gpt-4o", "qwen-32b"]

# A use: LiteLLM team and alias, public name, provider model (several can share a team).
uses = st.lists(
    st.tuples(
        st.sampled_from([*LITELLM_TEAMS[:2], *LITELLM_TEAMS, ("stranger", "research"), ("", None)]),
        st.sampled_from(MODEL_NAMES),
        st.sampled_from(DEPLOYMENTS),
    ),
    min_size=0,
    max_size=16,
)
figures = st.tuples(
    st.one_of(st.none(), money, st.sampled_from([0.1, 0.2, 0.7, 1e-17, 1e15])),
    st.integers(0, 10**12),
    st.integers(0, 10**12),
    st.integers(0, 10**6),
)
budgets = st.lists(
    st.builds(
        TeamBudget,
        st.sampled_from(["9f3c2a10-research", "b71e44d2-vision", "stranger", "other"]),
        st.one_of(st.none(), st.sampled_from(["research", "vision"])),
        st.one_of(st.none(), money),
        st.one_of(st.none(), st.floats(1.0, 1e6)),
        st.one_of(st.none(), st.floats(1.0, 1e6)),
        st.one_of(st.none(), st.just(datetime(2026, 12, 1, tzinfo=UTC))),
    ),
    max_size=4,
)


@st.composite
def refreshes(draw: st.DrawFn) -> list[LiteLLMSnapshot]:
    """Snapshots one after another: mostly figures moved over the same uses (a steady refresh),
    sometimes a use added or gone, the order shuffled, the team list or the rate changed."""
    shape = draw(uses)
    teams = draw(budgets)
    out: list[LiteLLMSnapshot] = []
    for _ in range(draw(st.integers(1, 5))):
        step = draw(st.sampled_from(["figures", "same", "uses", "shuffle", "teams", "rate"]))
        if step == "uses":
            shape = draw(uses)
        elif step == "shuffle":
            shape = draw(st.permutations(shape))
        elif step == "teams":
            teams = draw(budgets)
        keep = out and step == "same"
        usage = (
            out[-1].usage
            if keep
            else _usage(shape, draw(st.lists(figures, min_size=len(shape), max_size=len(shape))))
        )
        rate = draw(st.sampled_from([1.0, 0.92])) if step == "rate" else 1.0
        out.append(LiteLLMSnapshot(tuple(teams), usage, exchange_rate=rate))
    return out


def _usage(
    shape: list[tuple[tuple[str | None, str | None], str, str]],
    values: list[tuple[float | None, int, int, int]],
) -> tuple[ModelUsage, ...]:
    return tuple(
        ModelUsage(team, alias, model, spend, prompt, completion, n, deployment)
        for ((team, alias), model, deployment), (spend, prompt, completion, n) in zip(
            shape, values, strict=True
        )
    )


@settings(max_examples=examples(200), deadline=None)
@given(refreshes())
def test_each_memoised_part_equals_a_fresh_one(run: list[LiteLLMSnapshot]) -> None:
    memo = LlmMemo()
    for snapshot in run:
        got = memo.part(snapshot, ATTRIBUTOR, MODELS)
        want = llm_part(snapshot, ATTRIBUTOR, MODELS)
        assert got == want
        # Equal is not enough for money: every float sum must be the same number, bit for bit.
        assert [_bits(u.spend) for u in got.usage.values()] == [
            _bits(u.spend) for u in want.usage.values()
        ]
        assert list(got.usage) == list(want.usage)  # the same (sorted) order


def _bits(value: float | None) -> str | None:
    return None if value is None else value.hex()


def _snapshot(*rows: tuple[str, float, int]) -> LiteLLMSnapshot:
    return LiteLLMSnapshot(
        (), tuple(ModelUsage(team, None, "gpt-4o", spend, n, n, 1) for team, spend, n in rows)
    )


def test_figures_moved_over_the_same_uses_keep_the_unchanged_ones() -> None:
    memo = LlmMemo()
    first = memo.part(_snapshot(("vision", 1.0, 10), ("stranger", 2.0, 5)), ATTRIBUTOR, MODELS)
    moved = memo.part(_snapshot(("vision", 1.5, 12), ("stranger", 2.0, 5)), ATTRIBUTOR, MODELS)
    assert moved.usage[("vision", "gpt-4o")].spend == 1.5
    assert moved.usage[("stranger", "gpt-4o")] is first.usage[("stranger", "gpt-4o")]
    again = memo.part(_snapshot(("vision", 1.5, 12), ("stranger", 2.0, 5)), ATTRIBUTOR, MODELS)
    # Nothing moved: the same mapping, which later steps can tell unchanged at a glance.
    assert again.usage is moved.usage and again.budgets is moved.budgets
    assert again == llm_part(
        _snapshot(("vision", 1.5, 12), ("stranger", 2.0, 5)), ATTRIBUTOR, MODELS
    )


def test_a_new_use_or_attributor_routes_afresh() -> None:
    memo = LlmMemo()
    memo.part(_snapshot(("vision", 1.0, 10)), ATTRIBUTOR, MODELS)
    grown = _snapshot(("vision", 1.0, 10), ("9f3c2a10-research", 3.0, 1))
    assert memo.part(grown, ATTRIBUTOR, MODELS) == llm_part(grown, ATTRIBUTOR, MODELS)
    renamed = replace(grown, usage=(replace(grown.usage[1], alias="vision"), grown.usage[0]))
    assert memo.part(renamed, ATTRIBUTOR, MODELS) == llm_part(renamed, ATTRIBUTOR, MODELS)
    assert memo.part(renamed, ATTRIBUTOR, ()) == llm_part(renamed, ATTRIBUTOR, ())

"""Closed LiteLLM dates packed into arrays: the same totals as summing the dicts, date by date."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from exporter.sources.litellm.daily import UsageMetrics
from exporter.sources.litellm.key_breakdown import DayUsage, Use
from exporter.sources.litellm.packed import Uses

USES: list[Use] = [
    (team, group, model)
    for team in ("t-a", "t-b", "Unassigned")
    for group, model in (("gpt-4o", "azure/gpt-4o"), ("llama", "hosted_vllm/llama"))
]
METRICS = st.builds(
    UsageMetrics,
    st.one_of(st.none(), st.floats(0.0, 1e6, allow_nan=False)),
    st.integers(0, 10**12),
    st.integers(0, 10**12),
    st.integers(0, 10**9),
)
DAY = st.dictionaries(st.sampled_from(USES), METRICS, max_size=len(USES))


def _summed(days: list[DayUsage]) -> DayUsage:
    totals: DayUsage = {}
    for usage in days:
        for use, metrics in usage.items():
            before = totals.get(use)
            totals[use] = metrics if before is None else before.plus(metrics)
    return totals


@given(st.lists(DAY, max_size=6), st.integers(0, 6))
def test_totals_equal_the_dicts_summed_in_date_order(days: list[DayUsage], cut: int) -> None:
    uses = Uses()
    packed = [uses.pack(day) for day in days]
    # Some dates added first, the rest as they close: the same as adding them all at once.
    uses.add(packed[:cut])
    uses.add(packed[cut:])
    assert uses.totals() == _summed(days)
    uses.clear_totals()
    uses.add(packed)
    assert uses.totals() == _summed(days)


def test_an_unknown_spend_stays_unknown_and_zero_uses_count() -> None:
    use_a, use_b = USES[0], USES[1]
    uses = Uses()
    uses.add(
        [
            uses.pack({use_a: UsageMetrics(None, 5, 1, 1), use_b: UsageMetrics(0.0, 0, 0, 0)}),
            uses.pack({use_a: UsageMetrics(2.5, 1, 1, 1)}),
        ]
    )
    assert uses.totals() == {use_a: UsageMetrics(None, 6, 2, 2), use_b: UsageMetrics(0.0, 0, 0, 0)}


def test_a_date_is_the_same_up_to_float_order_and_differs_beyond() -> None:
    use = USES[0]
    uses = Uses()

    def day(spend: float | None, prompt: int = 10) -> DayUsage:
        return {use: UsageMetrics(spend, prompt, 2, 1)}

    base = uses.pack(day(0.1 + 0.2))
    assert base.same_as(uses.pack(day(0.3)))  # the proxy's own summation order
    assert not base.same_as(uses.pack(day(0.3001)))
    assert not base.same_as(uses.pack(day(None)))
    assert uses.pack(day(None)).same_as(uses.pack(day(None)))
    assert not base.same_as(uses.pack(day(0.3, prompt=11)))
    assert not base.same_as(uses.pack({USES[1]: UsageMetrics(0.3, 10, 2, 1)}))
    assert math.isclose(0.1 + 0.2, 0.3) and 0.1 + 0.2 != 0.3

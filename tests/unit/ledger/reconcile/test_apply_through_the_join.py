"""True-up through the join: under every idle policy and dimension the month foots to the bills."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exporter.calendar import Month
from exporter.config.schema import Config, IdlePolicy
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.components import Component
from exporter.ledger.join import join
from exporter.ledger.result import Chargeback
from exporter.sources.bills.lines import BillKind
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import FIXED_NOW
from tests.support.bounded_snapshots import bounded_snapshots, demo_config
from tests.support.properties import examples
from tests.unit.ledger.reconcile.builders import cluster_line, llm_line, snapshot

BILLS = {
    "openai": {"type": "openai", "admin_key_env": "OPENAI_ADMIN_KEY", "true_up": True},
    "cur": {"type": "focus", "path": "/exports", "true_up": True},
}
amounts = st.floats(0.0, 1e6, allow_nan=False)


def _config(policy: IdlePolicy, by_node: bool) -> Config:
    return demo_config(policy, by_node, bills={"sources": BILLS})


def _days(reading: Reading) -> list[date]:
    return [start.date() for start, _ in reading.month.days()]


@st.composite
def billed(draw: st.DrawFn, days: list[date]) -> Snapshots:
    bundle = draw(bounded_snapshots(with_llm=True))
    chosen = st.sampled_from(days)
    llm = [llm_line("openai", draw(chosen), "gpt-4o-2024-08-06", draw(amounts)) for _ in range(3)]
    nodes = [cluster_line("cur", draw(chosen), f"i-{n}", draw(amounts)) for n in range(3)]
    bills = {
        "openai": snapshot("openai", BillKind.LLM, llm, days),
        "cur": snapshot("cur", BillKind.CLUSTER, nodes, days),
    }
    assert bundle.litellm is not None
    spent = {(draw(chosen), "gpt-4o", "gpt-4o-2024-08-06"): draw(amounts) for _ in range(2)}
    return replace(bundle, litellm=replace(bundle.litellm, daily_spend=spent), bills=bills)


def _cents(value: float) -> int:
    return round(value * 100)


def _close(a: float, b: float, *scale: float) -> bool:
    return math.isclose(a, b, rel_tol=0, abs_tol=1e-12 * (1 + sum(abs(s) for s in scale)) + 1e-9)


def _terms(result: Chargeback) -> float:
    assert result.month is not None
    return math.fsum(abs(v) for v in result.month.costs.values())


@pytest.mark.parametrize("policy", list(IdlePolicy))
@pytest.mark.parametrize("by_node", [False, True])
@settings(
    max_examples=examples(40),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_closed_month_trues_up_to_the_cent_in_every_dimension(
    policy: IdlePolicy, by_node: bool, data: st.DataObject
) -> None:
    config = _config(policy, by_node)
    closed = Reading.closed_month(Month.of(FIXED_NOW, config.zone))
    bundle = data.draw(billed(_days(closed)))
    result = join(config, Attributor(config), bundle, closed)
    without = join(config, Attributor(config), replace(bundle, bills={}), closed)
    assert result.month is not None and without.month is not None
    assert result.reconciliation is not None and without.reconciliation is None
    assert {(u.source, u.provider) for u in result.true_ups} <= {
        ("openai", "openai"),
        ("cur", "aws"),
    }
    added = 0.0
    for up in result.true_ups:
        assert sum(_cents(v) for v in up.teams.values()) == _cents(up.amount)
        figures = next(b for b in result.reconciliation.bills if b.source == up.source)
        size = abs(figures.billed) + abs(figures.recorded)
        assert abs(up.amount - figures.difference) <= 0.005 + 1e-12 * size
        added += up.amount
    # A float sum is exact to a few ulps of its largest terms, so those scale the tolerance.
    scale = (_terms(result), _terms(without), added)
    assert _close(result.month.total(), without.month.total() + added, *scale)
    trued = sum(v for (_, c), v in result.month.costs.items() if c == Component.TRUE_UP)
    assert _close(trued, added, *scale)
    for (team, component), amount in without.month.costs.items():
        assert _close(result.month.costs.get((team, component), 0.0), amount, amount)
    for split in result.dimensions:
        terms = math.fsum(abs(v) for v in split.month.costs.values())
        assert _close(split.month.total(), result.month.total(), *scale, terms, _terms(result))


def test_the_month_to_date_never_trues_up() -> None:
    config = _config(IdlePolicy.SEPARATE, False)
    today = Reading.open(FIXED_NOW, config.zone)
    bundle = Snapshots(
        litellm=LiteLLMSnapshot((), ()),
        bills={
            "openai": snapshot(
                "openai",
                BillKind.LLM,
                [llm_line("openai", FIXED_NOW.date().replace(day=1), "gpt-4o", 5.0)],
                _days(today),
            )
        },
    )
    result: Chargeback = join(config, Attributor(config), bundle, today)
    assert result.true_ups == ()
    assert result.reconciliation is not None
    (bill,) = result.reconciliation.bills
    assert not bill.month_closed and bill.billed == 5.0

"""Money is conserved in a what-if too: under every key and policy, every team's after (and
every dimension's) sums to the cluster's cost, the same cost unless a price changed it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import IdlePolicy
from exporter.finance.what_if.keys import parse_what_if
from exporter.finance.what_if.rerun import rerun
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.dimensions.split import DimensionCosts
from exporter.ledger.join import join
from exporter.ledger.result import Chargeback
from exporter.ledger.what_if.settings import WhatIfError
from exporter.sources.litellm.snapshot import LiteLLMSnapshot, ModelUsage
from exporter.sources.reading import Reading
from tests.support.bounded_snapshots import (
    QUEUES,
    bounded_snapshots,
    demo_config,
    join_now,
    join_settings,
)
from tests.support.properties import examples
from tests.support.seed_month import NOVEMBER, SeedMonth, month_config, month_snapshots

POLICIES = [p.value for p in IdlePolicy]
price = st.floats(0.01, 100.0)
gpus = st.floats(0.0, 8.0)


@st.composite
def settings_drawn(draw: st.DrawFn) -> tuple[str, ...]:
    """One to four of the keys that change policy, prices and quota, with in-range values."""
    choices = {
        "idle_policy": st.sampled_from(POLICIES),
        "gpu_price.NVIDIA-H100-80GB-HBM3": price.map(str),
        "gpu_price.NVIDIA L40S": price.map(str),
        "gpu_flavor_price.h100": price.map(str),
        "gpu_flavor_price.l40s": price.map(str),
        **{f"quota.{q}/h100": gpus.map(str) for q in QUEUES},
        **{f"quota.{q}/l40s": gpus.map(str) for q in QUEUES},
    }
    keys = draw(st.lists(st.sampled_from(sorted(choices)), min_size=1, max_size=4, unique=True))
    return tuple(f"{k}={draw(choices[k])}" for k in keys)


def _conserved(ledger: Ledger | DimensionCosts | None, total: float) -> None:
    # A float sum is exact to a few ulps of its largest terms: that is the tolerance.
    assert ledger is not None
    scale = math.fsum(abs(v) for v in ledger.costs.values()) + abs(total)
    assert ledger.total() == pytest.approx(total, abs=1e-12 * scale + 1e-9)


def _month_total(result: Chargeback) -> float:
    assert result.cluster is not None
    return result.cluster.month_total


@pytest.mark.parametrize("policy", list(IdlePolicy))
@join_settings(60)
@given(data=st.data())
def test_every_team_and_dimension_after_sums_to_the_clusters_cost(
    policy: IdlePolicy, data: st.DataObject
) -> None:
    config = demo_config(policy)
    latest = data.draw(bounded_snapshots(with_llm=False))
    before = join_now(config, latest)
    given_settings = data.draw(settings_drawn())
    after = rerun(parse_what_if(given_settings, config, latest), config, latest, before).after
    _conserved(after.month, _month_total(after))
    for split in after.dimensions:
        _conserved(split.month, _month_total(after))
    if not any(s.startswith("gpu_") for s in given_settings):
        # Policy and quota move money between teams; only a price changes what it adds to.
        total = _month_total(before)
        assert _month_total(after) == pytest.approx(total, abs=1e-12 * abs(total) + 1e-9)


hours = st.floats(0.0, 700.0)


@pytest.mark.parametrize("policy", list(IdlePolicy))
@settings(max_examples=examples(60), deadline=None, derandomize=True)
@given(
    used=st.tuples(hours, hours, hours),
    serving=st.floats(1.0, 700.0),
    tokens=st.tuples(st.integers(1, 10**10), st.integers(0, 10**10)),
    asked=st.floats(1.0, 1e6),
)
def test_another_throughput_conserves_the_month(
    policy: IdlePolicy,
    used: tuple[float, float, float],
    serving: float,
    tokens: tuple[int, int],
    asked: float,
) -> None:
    month = SeedMonth(
        dict(zip("abc", used, strict=True)),
        {"a": 2.0, "b": 1.0, "c": 1.0},
        4,
        1.40,
        cpu=0.01,
        idle_cpu=3.0,
        storage=0.02,
        serving={"ns-serve": serving},
    )
    llm = LiteLLMSnapshot(
        (),
        tuple(
            ModelUsage(t, None, "llama", 0.0, n, n // 3, 1)
            for t, n in zip("ab", tokens, strict=True)
        ),
    )
    decl = [{"model": "llama", "self_hosted": {"namespace": "ns-serve"}}]
    config = month_config(policy, ["a", "b", "c", "serve"], llm_models=decl)
    latest = month_snapshots(month, llm)
    reading = Reading.closed_month(NOVEMBER)
    before = join(config, Attributor(config), latest, reading)
    what_if = parse_what_if([f"tokens_per_second.llama={asked!r}"], config, latest)
    try:
        after = rerun(what_if, config, latest, before).after
    except WhatIfError as exc:
        # Only serving slower than the month did can need more GPU-hours than sat idle.
        assert "than the month left idle" in str(exc)
        return
    assert before.month is not None
    _conserved(after.month, before.month.total())
    _conserved(after.month, _month_total(before))

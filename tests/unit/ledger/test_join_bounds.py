"""Extreme but in-bounds upstream values never make a served number infinite, NaN or lost."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.config.schema import IdlePolicy
from exporter.exposition.series import series
from exporter.ledger.costs.cluster import gpu_money
from tests.support.bounded_snapshots import (
    bounded_snapshots,
    demo_config,
    join_now,
    join_settings,
    window_hours,
)


@pytest.mark.parametrize("policy", list(IdlePolicy))
@pytest.mark.parametrize("by_node", [False, True])
@join_settings(60)
@given(data=st.data())
def test_every_served_number_is_finite_and_money_is_conserved(
    policy: IdlePolicy, by_node: bool, data: st.DataObject
) -> None:
    config = demo_config(policy, by_node)
    bundle = data.draw(bounded_snapshots(with_llm=False))
    result = join_now(config, bundle)
    bad = [s for s in series(result) if not math.isfinite(s.value)]
    assert not bad, bad[:3]
    assert bundle.opencost is not None and result.month is not None and result.hourly is not None
    # Idle, borrowing and lending move money between teams; they never make or lose any. A
    # float sum is exact to a few ulps of its largest terms, so that is the tolerance.
    # The cluster's cost is OpenCost's with every GPU-hour at the price the config governs
    # (the demo builds the H100's): what it says besides GPUs, plus the GPU money applied.
    cluster = result.cluster
    assert cluster is not None and cluster.gpu_charge is not None
    charge = cluster.gpu_charge
    for ledger, window, total, gpu, own in (
        (
            result.month,
            bundle.opencost.month,
            cluster.month_total,
            charge.applied_month,
            charge.opencost_month,
        ),
        (
            result.hourly,
            bundle.opencost.rate,
            cluster.per_hour * window_hours(bundle),
            (charge.applied_per_hour or 0.0) * window_hours(bundle),
            (charge.opencost_per_hour or 0.0) * window_hours(bundle),
        ),
    ):
        hours = 1.0 if ledger is result.month else window.hours
        scale = math.fsum(abs(v) for v in ledger.costs.values()) * hours + window.total() + gpu
        tolerance = 1e-12 * scale + 1e-9
        assert ledger.total() * hours == pytest.approx(total, abs=tolerance)
        assert own == pytest.approx(gpu_money(window), abs=tolerance)
        besides = window.total() - gpu_money(window)
        assert total - gpu == pytest.approx(besides, abs=tolerance)
    # Every dimension (the demo's product and environment) sums to the same cluster's cost.
    assert {d.name for d in result.dimensions} == {"product", "environment"}
    for split in result.dimensions:
        month_scale = math.fsum(abs(v) for v in split.month.costs.values()) + abs(
            cluster.month_total
        )
        assert split.month.total() == pytest.approx(
            cluster.month_total, abs=1e-12 * month_scale + 1e-9
        )
        hour_scale = math.fsum(abs(v) for v in split.hourly.costs.values()) + abs(cluster.per_hour)
        assert split.hourly.total() == pytest.approx(
            cluster.per_hour, abs=1e-12 * hour_scale + 1e-9
        )


@pytest.mark.parametrize("policy", list(IdlePolicy))
@join_settings(60)
@given(data=st.data())
def test_llm_figures_at_their_bounds_stay_finite(policy: IdlePolicy, data: st.DataObject) -> None:
    config = demo_config(policy)
    bundle = data.draw(bounded_snapshots(with_llm=True))
    result = join_now(config, bundle)
    bad = [s for s in series(result) if not math.isfinite(s.value)]
    assert not bad, bad[:3]

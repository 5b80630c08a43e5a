"""Quota per team: each queue's samples, per-team GPU quota and the budgets it implies."""

from __future__ import annotations

import math

import pytest

from exporter.config.schema import Config
from exporter.exposition.series.quota import quota_samples
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.ledger.costs.quota import (
    default_gpu_budgets,
    gpu_quota_by_flavor,
    gpu_quota_by_team,
    queue_quotas,
    quota_budgets,
)
from exporter.sources.kueue.records import KueueSnapshot, QuotaRecord
from tests.unit.ledger.costs.quota_records import GPU, attributor, gpu_q

INF = math.inf

# --- samples and per-team GPU quota --------------------------------------------------------


def snapshot() -> KueueSnapshot:
    return KueueSnapshot(
        (
            gpu_q("cq-a", 2, 3, borrowed=1, borrowing_limit=2.0),
            QuotaRecord("cq-a", "pool", "default", "cpu", 32, usage=30.5),
            gpu_q("cq-b", 1, 0, lending_limit=1.0),
            gpu_q("cq-x", 1, 1),
        )
    )


def test_quota_samples_carry_team_and_every_family() -> None:
    samples = quota_samples(queue_quotas(snapshot(), attributor()))
    got = {
        (s.family.base, dict(s.labels)["cluster_queue"], dict(s.labels)["resource"]): s
        for s in samples
    }
    assert len(samples) == 4 * 6
    lent = got[("quota_lent", "cq-b", GPU)]
    assert lent.value == 1.0
    assert lent.labels == (
        ("team", "b"),
        ("cluster_queue", "cq-b"),
        ("cohort", "pool"),
        ("flavor", "h100"),
        ("resource", GPU),
    )
    assert got[("quota_borrowed", "cq-a", GPU)].value == 1.0
    assert got[("quota_usage", "cq-a", "cpu")].value == 30.5
    assert got[("quota_lending_limit", "cq-a", GPU)].value == INF
    assert got[("quota_borrowing_limit", "cq-a", GPU)].value == 2.0
    # A queue no team declares is its own team, named after it (design section 3).
    assert dict(got[("quota_nominal", "cq-x", GPU)].labels)["team"] == "cq-x"


def test_gpu_quota_by_team_sums_gpu_rows_only() -> None:
    quota = gpu_quota_by_team(snapshot(), attributor())
    assert quota.nominal == {"a": 2.0, "b": 1.0, "cq-x": 1.0}
    assert quota.usage == {"a": 3.0, "b": 0.0, "cq-x": 1.0}
    assert quota.borrowed == {"a": 1.0, "b": 0.0, "cq-x": 0.0}
    assert quota.lent == {"a": 0.0, "b": 1.0, "cq-x": 0.0}
    assert quota.lending_limit == {"a": 2.0, "b": 1.0, "cq-x": 1.0}
    assert gpu_quota_by_team(snapshot(), attributor(), flavors=("a100",)).nominal == {}


def test_undeclared_queue_quota_goes_to_unallocated_under_strict_teams() -> None:
    teams = [{"name": "a", "cluster_queues": ["cq-a"]}, {"name": "b", "cluster_queues": ["cq-b"]}]
    strict = Attributor(
        Config.model_validate({"teams": teams, "attribution": {"strict_teams": True}})
    )
    assert gpu_quota_by_team(snapshot(), strict).nominal == {"a": 2.0, "b": 1.0, UNALLOCATED: 1.0}


# --- budgets ---------------------------------------------------------------------------------


def test_default_gpu_budgets() -> None:
    assert default_gpu_budgets({"a": 2, "b": 1}, 1.40, 720) == pytest.approx(
        {"a": 2016.0, "b": 1008.0}
    )


def test_quota_budgets_price_each_flavor() -> None:
    snap = KueueSnapshot(
        (
            QuotaRecord("cq-a", "pool", "h100", GPU, 2.0),
            QuotaRecord("cq-a", "pool", "l40s", GPU, 1.0),
            QuotaRecord("cq-b", "pool", "l40s", GPU, 3.0),
        )
    )
    by_flavor = gpu_quota_by_flavor(snap, attributor())
    # a: (2 x 2.10 + 1 x 0.90) x 720 = 3672.00; b: 3 x 0.90 x 720 = 1944.00, but b has its own.
    got = quota_budgets(by_flavor, {"b"}, {"h100": 2.10, "l40s": 0.90}, 720)
    assert got == pytest.approx({("a", "gpu"): 3672.00})

"""Quota per team: samples, the lending rule, GPU quota money (conservation) and budgets."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import Config, IdlePolicy
from exporter.exposition.series.quota import quota_samples
from exporter.ledger.attribution import IDLE, UNALLOCATED, Attributor, Placement
from exporter.ledger.costs.ledger import CostLine, Ledger, charge
from exporter.ledger.costs.policies import RULES, IdleRule, idle_rule
from exporter.ledger.costs.quota import (
    LendingMismatch,
    apply_flavor_quota,
    apply_gpu_quota,
    default_gpu_budgets,
    gpu_quota_by_flavor,
    gpu_quota_by_team,
    lend,
    lendable,
    lending_mismatches,
    month_borrowing,
    queue_quotas,
    quota_budgets,
)
from exporter.sources.kueue.records import KueueSnapshot, QuotaRecord
from tests.support.properties import examples

GPU = "nvidia.com/gpu"
INF = math.inf
SEPARATE = idle_rule(IdlePolicy.SEPARATE)
PROPORTIONAL = idle_rule(IdlePolicy.PROPORTIONAL)
RESERVATION = idle_rule(IdlePolicy.RESERVATION)


def attributor() -> Attributor:
    teams = [
        {"name": "a", "cluster_queues": ["cq-a"]},
        {"name": "b", "cluster_queues": ["cq-b"]},
        {"name": "c", "cluster_queues": ["cq-c"]},
    ]
    return Attributor(Config.model_validate({"teams": teams}))


def gpu_q(
    name: str, nominal: float, usage: float, borrowed: float = 0.0, **kw: float
) -> QuotaRecord:
    return QuotaRecord(name, "pool", "h100", GPU, nominal, usage=usage, borrowed=borrowed, **kw)


# --- the worked example of the design (section 4) -----------------------------------------


def worked_example_ledger(rule: IdleRule) -> Ledger:
    price, hours = 1.40, 720.0
    used = {"a": 1080.0, "b": 432.0, "c": 252.0}
    lines = [
        CostLine(Placement(team, "namespace"), "gpu-node-1", {"gpu": gpu_hours * price})
        for team, gpu_hours in used.items()
    ]
    idle = 4 * price * hours - sum(used.values()) * price
    return charge(lines, {"": {"gpu": idle}}, rule)


def test_worked_example_reservation_to_the_cent() -> None:
    ledger = apply_gpu_quota(
        worked_example_ledger(RESERVATION),
        {"a": 2, "b": 1, "c": 1},
        {},
        {},
        1.40,
        720,
        RESERVATION,
    )
    teams = ledger.by_team()
    assert round(teams["a"]["gpu"], 2) == 2016.00
    assert round(teams["b"]["gpu"], 2) == 1008.00
    assert round(teams["c"]["gpu"], 2) == 1008.00
    assert round(teams.get(IDLE, {}).get("gpu", 0.0), 2) == 0.00
    assert round(ledger.total(), 2) == 4032.00


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (SEPARATE, {"a": 1512.00, "b": 604.80, "c": 352.80, IDLE: 1562.40}),
        (
            PROPORTIONAL,
            {"a": 1512.00 + 956.57, "b": 604.80 + 382.63, "c": 352.80 + 223.20},
        ),
    ],
)
def test_worked_example_without_borrowing_is_unchanged(
    rule: IdleRule, expected: dict[str, float]
) -> None:
    before = worked_example_ledger(rule)
    after = apply_gpu_quota(before, {"a": 2, "b": 1, "c": 1}, {}, {}, 1.40, 720, rule)
    assert after.costs == before.costs
    got = {team: round(sum(parts.values()), 2) for team, parts in after.by_team().items()}
    assert got == pytest.approx(expected, abs=0.005)
    assert round(after.total(), 2) == 4032.00


# --- GPU quota money -----------------------------------------------------------------------


def test_reservation_with_borrowing_and_lending() -> None:
    # 4 GPUs at 2.00 for one hour; a holds 1 and borrows 1 from b; b holds 2, uses 1; c holds 1.
    ledger = Ledger()
    ledger.add("a", "gpu", 4.0)
    ledger.add("b", "gpu", 2.0)
    ledger.add(IDLE, "gpu", 2.0)
    out = apply_gpu_quota(
        ledger, {"a": 1, "b": 2, "c": 1}, {"a": 1}, {"b": 1}, 2.0, 1.0, RESERVATION
    )
    assert out.by_team() == {
        "a": {"gpu": 2.0, "borrowed": 2.0},
        "b": {"gpu": 4.0, "lent": -2.0},
        "c": {"gpu": 2.0},
    }
    assert out.total() == ledger.total() == 8.0
    assert ledger.costs[("a", "gpu")] == 4.0  # the input ledger is left alone


def test_reservation_beyond_idle_shows_as_negative_idle() -> None:
    ledger = Ledger()
    ledger.add("a", "gpu", 1.0)
    out = apply_gpu_quota(ledger, {"a": 3}, {}, {}, 1.0, 1.0, RESERVATION)
    assert out.costs[(IDLE, "gpu")] == -2.0 and out.total() == 1.0


@pytest.mark.parametrize("rule", [SEPARATE, PROPORTIONAL])
def test_usage_policies_move_borrowed_cost_out_of_gpu(rule: IdleRule) -> None:
    ledger = Ledger()
    ledger.add("a", "gpu", 3.0)
    ledger.add("b", "gpu", 0.5)
    ledger.add(IDLE, "gpu", 1.0)
    out = apply_gpu_quota(ledger, {"a": 1, "b": 1}, {"a": 1, "b": 1}, {"c": 1}, 1.0, 1.0, rule)
    assert out.by_team() == {
        "a": {"gpu": 2.0, "borrowed": 1.0},
        "b": {"borrowed": 0.5},  # never more than the team's gpu cost
        IDLE: {"gpu": 1.0},
    }
    assert out.total() == ledger.total()


teams = st.sampled_from(["a", "b", "c", "d", IDLE, UNALLOCATED])
amounts = st.floats(min_value=0, max_value=1e5, allow_nan=False, allow_infinity=False)
gpus = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.floats(0, 64), max_size=4)


@settings(max_examples=examples(300))
@given(
    costs=st.dictionaries(st.tuples(teams, st.sampled_from(["gpu", "cpu", "idle_share"])), amounts),
    nominal=gpus,
    borrowed=gpus,
    lent=gpus,
    price=st.floats(0, 50),
    hours=st.floats(0, 744),
    rule=st.sampled_from(list(RULES.values())),
)
def test_apply_gpu_quota_conserves_the_total(
    costs: dict[tuple[str, str], float],
    nominal: dict[str, float],
    borrowed: dict[str, float],
    lent: dict[str, float],
    price: float,
    hours: float,
    rule: IdleRule,
) -> None:
    before = Ledger(dict(costs))
    after = apply_gpu_quota(before, nominal, borrowed, lent, price, hours, rule)
    scale = sum(map(abs, before.costs.values())) + sum(map(abs, after.costs.values())) + 1.0
    assert abs(after.total() - before.total()) <= 1e-9 * scale
    if not rule.charges_gpu_quota:
        assert all(component != "lent" for _, component in after.costs)
        assert all(v >= 0 for (_, c), v in after.costs.items() if c in ("gpu", "borrowed"))


# --- the lending rule ----------------------------------------------------------------------


def test_borrowed_is_apportioned_by_lendable_quota() -> None:
    queues = [
        gpu_q("cq-a", 2, 5, borrowed=3),
        gpu_q("cq-b", 4, 1),  # lendable 3
        gpu_q("cq-c", 4, 0, lending_limit=1.0),  # lendable min(4, 1) = 1
        gpu_q("cq-d", 1, 1),  # nothing to lend
    ]
    assert [lendable(q) for q in queues] == [0.0, 3.0, 1.0, 0.0]
    lent = lend(queues)
    assert lent[("cq-b", "h100", GPU)] == pytest.approx(2.25)
    assert lent[("cq-c", "h100", GPU)] == pytest.approx(0.75)
    assert lent[("cq-a", "h100", GPU)] == 0.0 and lent[("cq-d", "h100", GPU)] == 0.0
    assert lending_mismatches(queues, lent) == []


def test_cohorts_flavors_and_resources_are_separate_pools() -> None:
    queues = [
        gpu_q("cq-a", 1, 2, borrowed=1),
        QuotaRecord("cq-b", "other", "h100", GPU, 4, usage=0),  # another cohort: lends nothing
        QuotaRecord("cq-c", "pool", "a100", GPU, 4, usage=0),  # another flavor
        gpu_q("cq-d", 2, 0),
        QuotaRecord("cq-e", "", "h100", GPU, 9, usage=0),  # no cohort: never lends
    ]
    lent = lend(queues)
    assert lent == {
        ("cq-a", "h100", GPU): 0.0,
        ("cq-b", "h100", GPU): 0.0,
        ("cq-c", "a100", GPU): 0.0,
        ("cq-d", "h100", GPU): 1.0,
    }


def test_borrowing_from_cohort_held_quota_is_reported_not_invented() -> None:
    queues = [gpu_q("cq-a", 1, 4, borrowed=3), gpu_q("cq-b", 2, 1)]
    lent = lend(queues)
    assert lent[("cq-b", "h100", GPU)] == 1.0  # never more than its unused quota
    assert lending_mismatches(queues, lent) == [LendingMismatch("pool", "h100", GPU, 3.0, 1.0)]


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


# --- month to date and budgets ---------------------------------------------------------------


def test_month_borrowing_lent_sums_to_borrowed_when_enough_is_lendable() -> None:
    borrowed, lent = month_borrowing(
        {"a": 2, "b": 1, "c": 1}, {"a": 1800, "b": 432, "c": 252}, {"c": 0.5}, 720
    )
    # a used 1800 of its 1440: borrows 360. b could lend 288, c min(468, 360) = 360.
    assert borrowed == {"a": 360.0, "b": 0.0, "c": 0.0}
    assert lent == pytest.approx({"a": 0.0, "b": 360 * 288 / 648, "c": 360 * 360 / 648})
    assert sum(lent.values()) == pytest.approx(sum(borrowed.values()))


def test_month_borrowing_never_lends_more_than_is_spare() -> None:
    borrowed, lent = month_borrowing({"a": 1, "b": 1}, {"a": 30, "b": 5, "z": 10}, {}, 10)
    assert borrowed == {"a": 20.0, "b": 0.0, "z": 10.0}
    assert lent == {"a": 0.0, "b": 5.0, "z": 0.0}


@given(
    nominal=st.dictionaries(st.sampled_from("abcd"), st.floats(0, 16), max_size=4),
    used=st.dictionaries(st.sampled_from("abcd"), st.floats(0, 20_000), max_size=4),
)
def test_month_borrowing_properties(nominal: dict[str, float], used: dict[str, float]) -> None:
    borrowed, lent = month_borrowing(nominal, used, {}, 720)
    total_b, total_l = sum(borrowed.values()), sum(lent.values())
    assert total_l <= total_b + 1e-6
    spare = sum(max(0.0, nominal.get(t, 0) * 720 - used.get(t, 0)) for t in borrowed)
    if spare >= total_b:
        assert total_l == pytest.approx(total_b, rel=1e-9, abs=1e-9)
    assert all(not (borrowed[t] > 0 and lent[t] > 0) for t in borrowed)


def test_default_gpu_budgets() -> None:
    assert default_gpu_budgets({"a": 2, "b": 1}, 1.40, 720) == pytest.approx(
        {"a": 2016.0, "b": 1008.0}
    )


flavor_gpus = st.dictionaries(st.sampled_from(["h100", "l40s"]), gpus, max_size=2)


@settings(max_examples=examples(300))
@given(
    costs=st.dictionaries(st.tuples(teams, st.sampled_from(["gpu", "cpu", "idle_share"])), amounts),
    nominal=flavor_gpus,
    borrowed=flavor_gpus,
    lent=flavor_gpus,
    prices=st.dictionaries(st.sampled_from(["h100", "l40s"]), st.floats(0, 50), max_size=2),
    hours=st.floats(0, 744),
    rule=st.sampled_from(list(RULES.values())),
)
def test_apply_flavor_quota_conserves_the_total_over_two_flavors(
    costs: dict[tuple[str, str], float],
    nominal: dict[str, dict[str, float]],
    borrowed: dict[str, dict[str, float]],
    lent: dict[str, dict[str, float]],
    prices: dict[str, float],
    hours: float,
    rule: IdleRule,
) -> None:
    before = Ledger(dict(costs))
    after = apply_flavor_quota(before, nominal, borrowed, lent, prices, hours, rule)
    scale = sum(map(abs, before.costs.values())) + sum(map(abs, after.costs.values())) + 1.0
    assert abs(after.total() - before.total()) <= 1e-9 * scale
    if rule.charges_gpu_quota:
        # Each team with priced quota pays exactly its nominal GPUs at its flavors' prices.
        for team in {t for f in nominal if f in prices for t in nominal[f]}:
            want = sum(
                nominal[f].get(team, 0.0) * prices[f] * hours for f in nominal if f in prices
            )
            assert after.costs.get((team, "gpu"), 0.0) == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_two_flavors_are_charged_at_their_own_prices() -> None:
    # a holds 2 H100 at 2.10 and b 2 L40S at 0.90, for one hour; the cluster's 4 GPUs cost
    # 6.00 in all, all of it still on __idle__ before quota: a pays 4.20, b 1.80, idle 0.
    before = Ledger({(IDLE, "gpu"): 6.00})
    nominal = {"h100": {"a": 2.0}, "l40s": {"b": 2.0}}
    prices = {"h100": 2.10, "l40s": 0.90}
    after = apply_flavor_quota(before, nominal, {}, {}, prices, 1.0, RESERVATION)
    # __idle__ keeps nothing: not even a residue of rounding that would print as -0.00.
    assert after.costs == pytest.approx({("a", "gpu"): 4.20, ("b", "gpu"): 1.80})
    # An unpriced flavor is left out rather than charged at some other flavor's price.
    only_h100 = apply_flavor_quota(before, nominal, {}, {}, {"h100": 2.10}, 1.0, RESERVATION)
    assert ("b", "gpu") not in only_h100.costs


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


@pytest.mark.parametrize("rule", [SEPARATE, PROPORTIONAL])
def test_an_unallocated_workload_pays_gpu_not_borrowed(rule: IdleRule) -> None:
    # a holds 2 GPUs for 10 hours and uses 5 GPU-hours at 1.40; an unlabelled workload with no
    # ClusterQueue ran 10 GPU-hours (14.00) on a's quota. It borrowed nothing from Kueue's
    # point of view: its 14.00 is GPU cost.
    before = Ledger({("a", "gpu"): 7.00, (UNALLOCATED, "gpu"): 14.00, (IDLE, "gpu"): 7.00})
    after = apply_flavor_quota(
        before, {"": {"a": 2.0}}, {"": {UNALLOCATED: 1.0}}, {"": {"a": 1.0}}, {"": 1.40}, 10, rule
    )
    assert after.costs[(UNALLOCATED, "gpu")] == pytest.approx(14.00)
    assert (UNALLOCATED, "borrowed") not in after.costs
    assert after.total() == pytest.approx(28.00)


def test_an_unallocated_workload_under_reservation_is_gpu_and_credits_the_lender() -> None:
    before = Ledger({("a", "gpu"): 7.00, (UNALLOCATED, "gpu"): 14.00, (IDLE, "gpu"): 7.00})
    after = apply_flavor_quota(
        before,
        {"": {"a": 2.0}},
        {"": {UNALLOCATED: 1.0}},
        {"": {"a": 1.0}},
        {"": 1.40},
        10,
        RESERVATION,
    )
    # a pays its 2 GPUs (28.00) less the one the workload ran on (-14.00); the workload pays
    # 14.00 as GPU cost; __idle__ keeps nothing.
    assert after.costs[("a", "gpu")] == pytest.approx(28.00)
    assert after.costs[("a", "lent")] == pytest.approx(-14.00)
    assert after.costs[(UNALLOCATED, "gpu")] == pytest.approx(14.00)
    assert (UNALLOCATED, "borrowed") not in after.costs
    assert after.costs.get((IDLE, "gpu"), 0.0) == pytest.approx(0.0)
    assert after.total() == pytest.approx(28.00)

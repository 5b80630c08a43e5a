"""FOCUS Tags with every dimension: cells split by combination, worked by hand, to the cent."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from exporter.finance.focus.days import DayLedger
from exporter.finance.focus.rows import FocusContext, focus_rows
from exporter.finance.focus.tags import Tagging, cell_cents, combination_cents
from exporter.finance.report.figures import Report, build_report
from exporter.ledger.attribution import IDLE
from exporter.ledger.costs.ledger import Ledger

NAMES = ("product", "environment")
Mix = dict[tuple[str, str], dict[tuple[str, ...], float]]
# Team a: 10.00 of GPU, two thirds (chat, prod), one third (rag, prod); team b: 5.01, a third
# each of (chat, dev), (rag, dev), (chat, prod).
MIX: Mix = {
    ("a", "gpu"): {("chat", "prod"): 2.0, ("rag", "prod"): 1.0},
    ("b", "gpu"): {("chat", "dev"): 1.0, ("rag", "dev"): 1.0, ("chat", "prod"): 1.0},
}
START = datetime(2026, 10, 1, tzinfo=UTC)
END = datetime(2026, 10, 2, tzinfo=UTC)


def _report(cells: dict[tuple[str, str], float]) -> Report:
    return build_report(Ledger(cells), "EUR", "2026-10", {})


def _targets(
    product: dict[str, int], environment: dict[str, int]
) -> tuple[dict[tuple[str, str], int], ...]:
    return (
        {(v, "gpu"): c for v, c in product.items()},
        {(v, "gpu"): c for v, c in environment.items()},
    )


def _by(cells: dict[tuple[str, str], list[tuple[tuple[str, ...], int]]], d: int) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for shares in cells.values():
        for combo, cents in shares:
            out[combo[d]] += cents
    return {v: c for v, c in out.items() if c}


def _cents(report: Report, by: Tagging) -> dict[tuple[str, str], list[tuple[tuple[str, ...], int]]]:
    return {
        k: [(s.combination, s.cents) for s in v] for k, v in combination_cents(report, by).items()
    }


def test_shares_round_then_move_a_cent_to_meet_each_dimensions_report() -> None:
    report = _report({("a", "gpu"): 10.0, ("b", "gpu"): 5.01})
    # Exact: a 666.67 (chat, prod) + 333.33 (rag, prod); b 167 each. Product: chat 1,000.67,
    # rag 500.33; environment: prod 1,167, dev 334. Say `report --by product` rounded chat down
    # and rag up (both are roundings of the exact figure; its own footing decides).
    by = Tagging(NAMES, MIX, _targets({"chat": 1000, "rag": 501}, {"prod": 1167, "dev": 334}))
    cells = _cents(report, by)
    # Plain rounding gives a 667 and 333; one cent moves within a, from chat to rag (both prod):
    # each share stays its exact share rounded down or up, the cell stays 10.00.
    assert cells[("a", "gpu")] == [(("chat", "prod"), 666), (("rag", "prod"), 334)]
    assert cells[("b", "gpu")] == [
        (("chat", "dev"), 167),
        (("chat", "prod"), 167),
        (("rag", "dev"), 167),
    ]
    assert _by(cells, 0) == {"chat": 1000, "rag": 501}
    assert _by(cells, 1) == {"prod": 1167, "dev": 334}
    assert sum(c for shares in cells.values() for _, c in shares) == 1501


def test_a_combination_under_a_cent_folds_into_the_largest() -> None:
    report = _report({("a", "gpu"): 1.0})
    mix: Mix = {("a", "gpu"): {("chat", "prod"): 999.0, ("rag", "prod"): 0.4, ("rag", "dev"): 0.5}}
    (share,) = combination_cents(report, Tagging(NAMES, mix))[("a", "gpu")]
    assert (share.combination, share.cents, share.weight) == (("chat", "prod"), 100, 999.9)


def test_when_two_reports_round_the_same_money_apart_a_cent_is_left() -> None:
    # 0.5 cent unallocated in both dimensions: one report rounds it up, the other down; the
    # rows carry one figure for both, so one dimension is a cent off (the rule docs state).
    report = _report({("a", "gpu"): 0.02, ("b", "gpu"): 0.01})
    mix: Mix = {
        ("a", "gpu"): {("x", "p"): 1.5, ("__unallocated__", "__unallocated__"): 0.5},
        ("b", "gpu"): {("x", "p"): 1.0},
    }
    by = Tagging(NAMES, mix, _targets({"x": 2, "__unallocated__": 1}, {"p": 3}))
    cells = _cents(report, by)
    assert sum(c for _, c in cells[("a", "gpu")]) == 2
    off = sum(abs(_by(cells, 0).get(v, 0) - t) for (v, _), t in by.targets[0].items())
    off += sum(abs(_by(cells, 1).get(v, 0) - t) for (v, _), t in by.targets[1].items())
    assert off == 2


def test_idle_and_unexplained_rows_are_reserved_in_every_dimension() -> None:
    report = _report({(IDLE, "gpu"): 1.0, ("c", "cpu"): 2.0})
    cells = _cents(report, Tagging(NAMES, {}))
    assert cells[(IDLE, "gpu")] == [((IDLE, IDLE), 100)]
    assert cells[("c", "cpu")] == [(("__unallocated__", "__unallocated__"), 200)]


def test_rows_carry_every_dimension_and_foot_by_each() -> None:
    report = _report({("a", "gpu"): 10.0, ("b", "gpu"): 5.01})
    day = DayLedger(
        START,
        END,
        {("a", "gpu"): 10.0, ("b", "gpu"): 5.01},
        {("a", "gpu"): 3.0, ("b", "gpu"): 1.0},
    )
    ctx = FocusContext("EUR", START, END, "c1", "P", "P", None)
    by = Tagging(NAMES, MIX, _targets({"chat": 1000, "rag": 501}, {"prod": 1167, "dev": 334}))
    rows = focus_rows(report, [day], ctx, by)
    sums: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    quantity: dict[str, Decimal] = defaultdict(Decimal)
    for row in rows:
        tags = json.loads(row.Tags)
        assert set(tags) == {"team", "product", "environment"}
        for name in tags:
            sums[(name, tags[name])] += Decimal(row.BilledCost)
        quantity[tags["team"]] += Decimal(row.ConsumedQuantity or 0)
    assert sums == {
        ("team", "a"): Decimal("10.00"),
        ("team", "b"): Decimal("5.01"),
        ("product", "chat"): Decimal("10.00"),
        ("product", "rag"): Decimal("5.01"),
        ("environment", "prod"): Decimal("11.67"),
        ("environment", "dev"): Decimal("3.34"),
    }
    # Quantities split by the mix and add up to the team's, to the sixth decimal.
    assert quantity == {"a": Decimal(3), "b": Decimal(1)}
    assert len(rows) == 5


def test_without_dimensions_the_rows_carry_the_team_alone() -> None:
    report = _report({("a", "gpu"): 10.0})
    day = DayLedger(START, END, {("a", "gpu"): 10.0}, {("a", "gpu"): 3.0})
    ctx = FocusContext("EUR", START, END, "c1", "P", "P", None)
    (row,) = focus_rows(report, [day], ctx)
    assert json.loads(row.Tags) == {"team": "a"} and row.BilledCost == "10.00"


_combos = st.tuples(st.sampled_from("pqr"), st.sampled_from("xyz"))


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "c", "d"]),
        st.tuples(
            st.integers(-100_000, 100_000),
            st.dictionaries(_combos, st.floats(0.001, 1e6), min_size=1, max_size=6),
        ),
        min_size=1,
    ),
    st.dictionaries(st.tuples(st.integers(0, 1), st.sampled_from("pqrxyz")), st.integers(-50, 50)),
)
def test_every_cell_is_conserved_and_each_share_within_a_cent(
    teams: dict[str, tuple[int, dict[tuple[str, str], float]]],
    nudges: dict[tuple[int, str], int],
) -> None:
    report = _report({(t, "gpu"): cents / 100 for t, (cents, _) in teams.items()})
    mix: Mix = {(t, "gpu"): {tuple(c): w for c, w in m.items()} for t, (_, m) in teams.items()}
    # Targets: the exact sums, nudged (whatever the reports say, cells never move).
    exact: list[dict[tuple[str, str], int]] = [defaultdict(int), defaultdict(int)]
    for cents, m in teams.values():
        total = sum(m.values())
        for combo, w in m.items():
            for d in (0, 1):
                exact[d][(combo[d], "gpu")] += round(cents * w / total)
    for (d, v), n in nudges.items():
        exact[d][(v, "gpu")] += n
    cells = combination_cents(report, Tagging(NAMES, mix, (dict(exact[0]), dict(exact[1]))))
    for row in report.rows:
        shares = cells[(row.team, "gpu")]
        cents = cell_cents(row.costs["gpu"])
        assert sum(s.cents for s in shares) == cents
        weight = sum(s.weight for s in shares)
        for s in shares:
            assert (
                abs(Decimal(cents) * Decimal(repr(s.weight)) / Decimal(repr(weight)) - s.cents) < 1
            )
            assert s.cents * cents >= 0


def test_each_combination_follows_its_own_days() -> None:
    # a's month is 6.00 (chat) + 3.00 (rag); chat ran on the first day only, rag on the second.
    report = _report({("a", "cpu"): 9.0})
    second = datetime(2026, 10, 3, tzinfo=UTC)
    days = [
        DayLedger(START, END, {("a", "cpu"): 6.0}, combos={("a", "cpu", ("chat", "prod")): 6.0}),
        DayLedger(END, second, {("a", "cpu"): 3.0}, combos={("a", "cpu", ("rag", "prod")): 3.0}),
    ]
    ctx = FocusContext("EUR", START, second, "c1", "P", "P", None)
    mix: Mix = {("a", "cpu"): {("chat", "prod"): 6.0, ("rag", "prod"): 3.0}}
    rows = focus_rows(report, days, ctx, Tagging(NAMES, mix))
    assert [
        (json.loads(r.Tags)["product"], r.x_ChargePeriodLocalDate, r.BilledCost) for r in rows
    ] == [
        ("chat", "2026-10-01", "6.00"),
        ("rag", "2026-10-02", "3.00"),
    ]

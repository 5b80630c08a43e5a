"""Rounding to the cent: rows and columns foot, the total is rounded once, ties by position."""

from __future__ import annotations

import math
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.finance.report.footing import cents, foot, largest_remainder
from tests.support.properties import examples


def _table(rows: list[list[str]]) -> list[list[Decimal]]:
    return [[cents(Decimal(v)) for v in row] for row in rows]


def test_cents_reads_the_float_as_written() -> None:
    assert cents(0.1) == Decimal("10.0")
    assert cents(45.215) == Decimal("4521.500")


def test_largest_remainder_gives_the_extra_cents_to_the_largest_remainders() -> None:
    # 33.33 + 33.33 + 33.34 cents of 100: floors 33 + 33 + 33, one cent left for the .34.
    values = [Decimal("33.33"), Decimal("33.33"), Decimal("33.34")]
    assert largest_remainder(values, 100) == [33, 33, 34]
    # Equal remainders: the earlier value goes up.
    assert largest_remainder([Decimal("0.5"), Decimal("0.5")], 1) == [1, 0]


def test_the_reported_misfoot_is_gone() -> None:
    # Three teams of 15.0733... each: rounding each alone prints 15.07 x 3 = 45.21 under a
    # total of 45.22. Footed, one team carries the cent and the column adds to 45.22.
    third = Decimal("4522") / 3
    footed = foot([[third], [third], [third]])
    assert footed.total == 4522
    assert footed.cells == ((1508,), (1507,), (1507,))
    assert footed.columns == (4522,)


def test_rows_first_when_both_margins_cannot_have_their_largest_remainder() -> None:
    # Rows 1.80, 1.55, 2.60, 1.50 (cents): 7.45 rounds to 7; largest remainder on rows wants
    # 2, 1, 3, 1, which puts 5 cents in column 0 (true 4.40): impossible. Team 1 takes the
    # cent instead of team 2: rows 2, 2, 2, 1, columns 4 and 3, all within a cent.
    footed = foot(_table([["0.018", "0"], ["0", "0.0155"], ["0.026", "0"], ["0", "0.015"]]))
    assert footed.total == 7
    assert footed.rows == (2, 2, 2, 1)
    assert footed.columns == (4, 3)


def test_exact_cells_never_move() -> None:
    footed = foot(_table([["1.00", "0"], ["0.005", "0.005"]]))
    assert footed.cells[0] == (100, 0)
    assert footed.total == 101


money = st.decimals(min_value=-500, max_value=5000, places=4, allow_nan=False)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.integers(1, 8).flatmap(
        lambda m: st.lists(st.lists(money, min_size=m, max_size=m), min_size=1, max_size=12)
    )
)
def test_every_row_and_column_foots(rows: list[list[Decimal]]) -> None:
    table = [[cents(v) for v in row] for row in rows]
    footed = foot(table)
    exact = sum((v for row in table for v in row), Decimal(0))
    assert footed.total == int(exact.quantize(Decimal(1), rounding="ROUND_HALF_UP"))
    assert sum(footed.rows) == footed.total == sum(footed.columns)
    for i, row in enumerate(footed.cells):
        assert sum(row) == footed.rows[i]
        assert math.floor(sum(table[i])) <= footed.rows[i] <= math.ceil(sum(table[i]))
        for j, cell in enumerate(row):
            assert math.floor(table[i][j]) <= cell <= math.ceil(table[i][j])
    for j, column in enumerate(footed.columns):
        exact_col = sum((table[i][j] for i in range(len(table))), Decimal(0))
        assert sum(r[j] for r in footed.cells) == column
        assert math.floor(exact_col) <= column <= math.ceil(exact_col)

"""The what-if table: the two reports' team totals side by side, footed, in each format."""

from __future__ import annotations

from decimal import Decimal

from exporter.finance.report.figures import Report, TeamRow
from exporter.finance.report.numbers import Numbers
from exporter.finance.report.text import ENGLISH
from exporter.finance.report.what_if import what_if_csv, what_if_table, what_if_text
from exporter.finance.report.writing import CSV, people
from exporter.ledger.attribution import IDLE


def _report(totals: dict[str, str]) -> Report:
    rows = tuple(TeamRow(t, {"gpu": Decimal(v)}, Decimal(v)) for t, v in totals.items())
    total = sum((r.total for r in rows), Decimal(0))
    return Report("EUR", "2026-11", ("gpu",), rows, {"gpu": total}, total, Decimal(0), Decimal(0))


BEFORE = _report({"a": "10.00", "b": "5.50"})
AFTER = _report({"b": "4.00", "a": "8.00", IDLE: "3.50"})


def test_a_row_absent_on_one_side_is_zero_there_and_rows_keep_the_reports_order() -> None:
    table = what_if_table(BEFORE, AFTER, ["k=v"], ("separate", "separate"))
    assert [(r.team, r.before, r.after, r.difference) for r in table.rows] == [
        ("a", Decimal("10.00"), Decimal("8.00"), Decimal("-2.00")),
        ("b", Decimal("5.50"), Decimal("4.00"), Decimal("-1.50")),
        (IDLE, Decimal(0), Decimal("3.50"), Decimal("3.50")),
    ]
    assert (table.before, table.after, table.difference) == (
        Decimal("15.50"),
        Decimal("15.50"),
        Decimal(0),
    )


def test_one_teams_table_foots_to_its_own_row() -> None:
    table = what_if_table(BEFORE, AFTER, ["k=v"], ("separate", "reservation"), team="b")
    assert what_if_csv(table, "EUR", CSV).splitlines() == [
        "team,before,after,difference,currency",
        "b,5.50,4.00,-1.50,EUR",
        "total,5.50,4.00,-1.50,EUR",
    ]
    text = what_if_text(table, people(Numbers(ENGLISH, "EUR")))
    assert "Idle policy: separate before, reservation after" in text
    assert text.rstrip().splitlines()[-1].split() == ["Total", "5.50", "4.00", "-1.50"]

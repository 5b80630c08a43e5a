"""A printed table as text: heads capitalised where they are words, figures right-aligned."""

from __future__ import annotations

from exporter.finance.report.text_tables import UnitTable, capitalised, text_lines


def test_a_head_is_capitalised_only_where_it_is_a_word() -> None:
    assert [capitalised(h) for h in ("kind", "kWh", "g CO2e", "GPUs")] == [
        "Kind",
        "kWh",
        "g CO2e",
        "GPUs",
    ]


def test_names_align_left_and_figures_right_under_the_title() -> None:
    table = UnitTable("t", "Title", ("name", "cost"), (("a", "1.00"), ("long name", "12.50")), 1)
    assert text_lines([table]) == [
        "",
        "Title",
        "",
        "Name        Cost",
        "---------  -----",
        "a           1.00",
        "long name  12.50",
    ]

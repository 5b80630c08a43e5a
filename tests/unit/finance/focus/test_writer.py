"""The FOCUS CSV: name cells cannot become spreadsheet formulas; figures are written as they are."""

from __future__ import annotations

import csv
import io
from typing import Any

from exporter.finance.focus.columns import COLUMNS, NAME_COLUMNS, OWN_COLUMNS, FocusRow
from exporter.finance.focus.writer import format_focus
from exporter.finance.report.cells import FORMULA_STARTS
from tests.support.formulas import FORMULA_NAMES

_FIGURES = ("BilledCost", "ContractedCost", "EffectiveCost", "ListCost")


def _row(name: str) -> FocusRow:
    values: dict[str, Any] = {column: f"v-{column}" for column in COLUMNS}
    names = {column: name for column in NAME_COLUMNS}
    figures = {column: "-12.50" for column in _FIGURES}
    quantities = {"ConsumedQuantity": "-0.5", "PricingQuantity": "-0.5"}
    return FocusRow(**{**values, **names, **figures, **quantities})


def test_every_column_is_a_name_or_our_own() -> None:
    assert set(COLUMNS) == NAME_COLUMNS | OWN_COLUMNS
    assert not NAME_COLUMNS & OWN_COLUMNS
    assert not NAME_COLUMNS & {*_FIGURES, "ConsumedQuantity", "PricingQuantity"}


def test_hostile_names_are_quoted_and_figures_stay_numbers() -> None:
    text = format_focus([_row(name) for name in FORMULA_NAMES])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(FORMULA_NAMES)
    for name, row in zip(FORMULA_NAMES, rows, strict=True):
        assert {row[c] for c in NAME_COLUMNS} == {f"'{name}"}
        assert not any(v[:1] in FORMULA_STARTS for c, v in row.items() if c in NAME_COLUMNS)
        assert {row[c] for c in _FIGURES} == {"-12.50"}
        assert row["ConsumedQuantity"] == row["PricingQuantity"] == "-0.5"


def test_plain_names_are_written_as_they_are() -> None:
    rows = list(csv.DictReader(io.StringIO(format_focus([_row("research")]))))
    assert {rows[0][c] for c in NAME_COLUMNS} == {"research"}

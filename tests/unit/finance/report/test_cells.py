"""Spreadsheet-safe text: a name that would read as a formula gets a leading quote, no other."""

from __future__ import annotations

import csv
import io

import pytest

from exporter.finance.report.cells import csv_text, spreadsheet_row, spreadsheet_text
from tests.support.formulas import FORMULA_NAMES


@pytest.mark.parametrize("name", FORMULA_NAMES)
def test_a_formula_start_is_quoted(name: str) -> None:
    assert spreadsheet_text(name) == f"'{name}"


@pytest.mark.parametrize("name", ["research", "", "gpt-4o", "a=b", "'=x", " =x", "{}", "1"])
def test_other_text_is_unchanged(name: str) -> None:
    assert spreadsheet_text(name) == name


def test_a_row_quotes_only_its_name_cells() -> None:
    assert spreadsheet_row(["-x", "-12.50", "@y"], {0, 2}) == ["'-x", "-12.50", "'@y"]


def test_a_cr_inside_a_name_is_quoted_and_rows_end_with_newline() -> None:
    text = csv_text([["a\rb", "-1.00"], ["c", "d"]])
    assert text == '"a\rb",-1.00\nc,d\n'
    assert list(csv.reader(io.StringIO(text))) == [["a\rb", "-1.00"], ["c", "d"]]

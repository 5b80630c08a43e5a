"""Spreadsheet-safe text: a name that would read as a formula gets a leading quote, no other."""

from __future__ import annotations

import csv
import io

import pytest

from exporter.finance.report.cells import csv_text, spreadsheet_text
from tests.support.formulas import FORMULA_NAMES


@pytest.mark.parametrize("name", FORMULA_NAMES)
def test_a_formula_start_is_quoted(name: str) -> None:
    assert spreadsheet_text(name) == f"'{name}"


@pytest.mark.parametrize("name", ["research", "", "gpt-4o", "a=b", "'=x", " =x", "{}", "1"])
def test_other_text_is_unchanged(name: str) -> None:
    assert spreadsheet_text(name) == name


def test_a_row_quotes_only_its_name_cells() -> None:
    text = csv_text(["h", "i", "j"], [["-x", "-12.50", "@y"], ["a", "-1", "b"]], [0, 2])
    assert text == "h,i,j\n'-x,-12.50,'@y\na,-1,b\n"
    assert csv_text(["h"], [["-x", "=y"]], [1]) == "h\n-x,'=y\n"
    assert csv_text(["h"], [["-x", "=y"]], []) == "h\n-x,=y\n"


def test_a_cr_inside_a_name_is_quoted_and_rows_end_with_newline() -> None:
    text = csv_text(["h", "i"], [["a\rb", "-1.00"], ["c", "d"], ["\rx", "e"]], [0])
    assert text == 'h,i\n"a\rb",-1.00\nc,d\n"\'\rx",e\n'
    rows = [["h", "i"], ["a\rb", "-1.00"], ["c", "d"], ["'\rx", "e"]]
    assert list(csv.reader(io.StringIO(text))) == rows


def test_a_formula_start_inside_a_name_is_left_alone() -> None:
    # The fast scan joins names with NUL: a name holding "NUL=" is checked, not quoted.
    assert csv_text(["h"], [["a\x00=b", "c"]], [0, 1]) == "h\na\x00=b,c\n"

"""The FOCUS 1.2 CSV export of a closed month: the header from the row type, then the rows."""

from __future__ import annotations

from collections.abc import Sequence

from exporter.finance.focus.columns import COLUMNS, NAME_COLUMNS, FocusRow, cells
from exporter.finance.report.cells import csv_text

__all__ = ["FOCUS_VERSION", "format_focus"]

FOCUS_VERSION = "1.2"

_NAMES = tuple(i for i, column in enumerate(COLUMNS) if column in NAME_COLUMNS)


def format_focus(rows: Sequence[FocusRow]) -> str:
    """The rows as CSV: a header, then one line per row; a null is an empty field.

    A name cell that a spreadsheet would read as a formula starts with `'`
    (`report.cells`); numbers, dates and our own vocabulary are written as they are.
    """
    values = (["" if value is None else value for value in cells(row)] for row in rows)
    return csv_text(COLUMNS, values, _NAMES)

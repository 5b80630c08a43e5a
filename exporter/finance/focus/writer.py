"""The FOCUS 1.2 CSV export of a closed month: the header from the row type, then the rows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from exporter.finance.focus.columns import COLUMNS, NAME_COLUMNS, FocusRow, cells
from exporter.finance.report.cells import csv_text, spreadsheet_text

__all__ = ["FOCUS_VERSION", "format_focus"]

FOCUS_VERSION = "1.2"

_NAMES = tuple(i for i, column in enumerate(COLUMNS) if column in NAME_COLUMNS)


def format_focus(rows: Sequence[FocusRow]) -> str:
    """The rows as CSV: a header, then one line per row; a null is an empty field.

    A name cell that a spreadsheet would read as a formula starts with `'`
    (`report.cells`); numbers, dates and our own vocabulary are written as they are.
    """
    return csv_text(_lines(rows))


def _lines(rows: Sequence[FocusRow]) -> Iterator[Sequence[str]]:
    yield COLUMNS
    for row in rows:
        values = ["" if value is None else value for value in cells(row)]
        # Only the name cells: a month has rows by the hundred thousand.
        for i in _NAMES:
            values[i] = spreadsheet_text(values[i])
        yield values

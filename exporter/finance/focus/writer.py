"""The FOCUS 1.2 CSV export of a closed month: the header from the row type, then the rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from exporter.finance.focus.columns import COLUMNS, FocusRow, cells

__all__ = ["FOCUS_VERSION", "format_focus"]

FOCUS_VERSION = "1.2"


def format_focus(rows: Sequence[FocusRow]) -> str:
    """The rows as CSV: a header, then one line per row; a null is an empty field."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(["" if value is None else value for value in cells(row)])
    return out.getvalue()

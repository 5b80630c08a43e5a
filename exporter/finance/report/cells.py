"""CSV text for spreadsheets: a name never reads as a formula and a CR never splits a row."""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Iterable, Sequence

__all__ = ["FORMULA_STARTS", "csv_text", "spreadsheet_row", "spreadsheet_text"]

# OWASP's CSV injection guidance: spreadsheets evaluate a cell starting with any of these
# (tab and CR included: some tools strip them and then read what follows as a formula).
FORMULA_STARTS = frozenset("=+-@\t\r")


def spreadsheet_text(text: str) -> str:
    """The text with a leading `'` when a spreadsheet would take it for a formula.

    Only for cells that carry names from upstreams or the config: a number we format ourselves
    (`-12.50`) must stay a number, so callers never pass one.
    """
    return f"'{text}" if text[:1] in FORMULA_STARTS else text


def spreadsheet_row(row: Sequence[str], names: Collection[int]) -> list[str]:
    """The row with its name cells (by index) made safe and every other cell as it is."""
    return [spreadsheet_text(c) if i in names else c for i, c in enumerate(row)]


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """The rows as CSV with `\\n` line ends, a field holding a CR quoted (RFC 4180).

    Python's writer quotes only the line end it writes, so a name holding a bare CR would end
    the row early for every reader; such a (rare) row is written with CRLF, which quotes it.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        if "\r" not in "".join(row):
            writer.writerow(row)
            continue
        one = io.StringIO()
        csv.writer(one, lineterminator="\r\n").writerow(row)
        out.write(one.getvalue()[:-2] + "\n")
    return out.getvalue()

"""CSV text for spreadsheets: a name never reads as a formula and a CR never splits a row."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter

__all__ = ["FORMULA_STARTS", "csv_text", "spreadsheet_text"]

# OWASP's CSV injection guidance: spreadsheets evaluate a cell starting with any of these
# (tab and CR included: some tools strip them and then read what follows as a formula).
FORMULA_STARTS = frozenset("=+-@\t\r")
_SEP = "\x00"  # joins a row's names so that each one's first character follows it
# A name starting with a formula character, or a CR anywhere (the writer would not quote it).
_RISK = re.compile(f"{_SEP}[=+\\-@\t]|\r")


def spreadsheet_text(text: str) -> str:
    """The text with a leading `'` when a spreadsheet would take it for a formula.

    Only for cells that carry names from upstreams or the config: a number we format ourselves
    (`-12.50`) must stay a number, so callers never pass one.
    """
    return f"'{text}" if text[:1] in FORMULA_STARTS else text


def csv_text(head: Sequence[str], rows: Iterable[Sequence[str]], names: Sequence[int]) -> str:
    """The header, then the rows, as CSV with `\\n` line ends; each row's cell at an index in
    `names` is made spreadsheet-safe.

    The header and the other cells are the caller's own words and figures, written as they
    are (a dimension's name in a header is lower-case letters by the config). A name
    holding a CR is quoted (RFC 4180): Python's writer quotes only the line end it writes, so
    a bare CR would end the row early for every reader; such a row is written with CRLF,
    which quotes it, and its line end put back to `\\n`.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(head)
    pick = _picker(names)
    for row in rows:
        # One scan in C per row: a month's FOCUS export has rows by the hundred thousand.
        if _RISK.search(_SEP + _SEP.join(pick(row))) is None:
            writer.writerow(row)
            continue
        safe = list(row)
        for i in names:
            safe[i] = spreadsheet_text(safe[i])
        if not any("\r" in safe[i] for i in names):
            writer.writerow(safe)
            continue
        one = io.StringIO()
        csv.writer(one, lineterminator="\r\n").writerow(safe)
        out.write(one.getvalue()[:-2] + "\n")
    return out.getvalue()


def _picker(names: Sequence[int]) -> Callable[[Sequence[str]], Sequence[str]]:
    """A row's name cells, picked in C (itemgetter gives a bare cell for one index)."""
    if not names:
        return lambda row: ()
    get = itemgetter(*names)
    return get if len(names) > 1 else lambda row: (get(row),)

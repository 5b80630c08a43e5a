"""Names a spreadsheet would read as formulas (OWASP CSV injection), for the CSV writers' tests."""

from __future__ import annotations

__all__ = ["FORMULA_NAMES"]

FORMULA_NAMES = ('=HYPERLINK("http://x","y")', "+1", "-2+3", "@SUM(1)", "\tx", "\rx")

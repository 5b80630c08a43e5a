"""A printed table (title, head, rows of cells) and its text layout: names left, figures right."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["UnitTable", "capitalised", "text_lines"]


@dataclass(frozen=True)
class UnitTable:
    """One printed table: its title, header and rows of cells (text, not yet aligned)."""

    key: str
    title: str
    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric_from: int  # cells from this column on are figures (right-aligned)


def capitalised(header: str) -> str:
    """A column head as a heading: "kind" -> "Kind"; "kWh", "g CO2e" stay as they are."""
    return header[:1].upper() + header[1:] if header[1:2].islower() else header


def text_lines(tables: Sequence[UnitTable]) -> list[str]:
    """The tables as text, each under its title: names left-aligned, figures right-aligned."""
    lines: list[str] = []
    for t in tables:
        rows = [tuple(capitalised(h) for h in t.head), *t.rows]
        widths = [max(len(row[i]) for row in rows) for i in range(len(t.head))]
        lines += ["", t.title, ""]
        for n, row in enumerate(rows):
            cells = [
                c.rjust(w) if i >= t.numeric_from else c.ljust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ]
            lines.append("  ".join(cells).rstrip())
            if n == 0:
                lines.append("  ".join("-" * w for w in widths))
    return lines

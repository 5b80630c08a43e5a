"""The FOCUS row type: its fields are the columns, in the documented order, and the CSV's header."""

from __future__ import annotations

import csv
import io
from typing import Any

import msgspec
import pytest

from exporter.finance.focus.columns import COLUMNS, FocusRow, cells
from exporter.finance.focus.writer import format_focus
from tests.support.focus_spec import MANDATORY, NOT_NULL


def _row(**changes: str | None) -> FocusRow:
    values: dict[str, Any] = {column: f"v-{column}" for column in COLUMNS}
    return FocusRow(**{**values, **changes})


def test_columns_are_focus_columns_alphabetically_then_custom_ones() -> None:
    focus = [c for c in COLUMNS if not c.startswith("x_")]
    custom = [c for c in COLUMNS if c.startswith("x_")]
    assert list(COLUMNS) == sorted(focus) + sorted(custom)
    assert len(set(COLUMNS)) == len(COLUMNS)


def test_every_mandatory_column_is_a_field_and_never_optional() -> None:
    assert set(MANDATORY) <= set(COLUMNS)
    hints = {f.name: f.type for f in msgspec.structs.fields(FocusRow)}
    # What the spec says may not be null is typed so the type checker refuses a None.
    assert {c for c in NOT_NULL if hints[c] is not str} == set()


def test_every_column_must_be_named_when_a_row_is_built() -> None:
    assert all(f.required for f in msgspec.structs.fields(FocusRow))
    with pytest.raises(TypeError):
        FocusRow(*(f"v-{c}" for c in COLUMNS))  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _row(BiledCost="1.00")  # a misspelt column


def test_the_csv_header_and_cells_follow_the_type() -> None:
    row = _row(ChargeClass=None, ResourceId="a,b")
    text = format_focus([row, row])
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0] == list(COLUMNS)
    assert len(lines) == 3 and lines[1] == lines[2]
    assert lines[1] == ["" if v is None else v for v in cells(row)]
    assert dict(zip(COLUMNS, lines[1], strict=True))["ChargeClass"] == ""
    assert text.splitlines()[0] == ",".join(COLUMNS)

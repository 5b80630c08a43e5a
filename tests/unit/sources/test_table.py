"""The source table: one row per source module, mirrored by the typed Snapshots bundle."""

from __future__ import annotations

from dataclasses import fields

import pytest

from exporter.sources.dcgm import source as dcgm
from exporter.sources.kueue import source as kueue
from exporter.sources.litellm import source as litellm
from exporter.sources.opencost import source as opencost
from exporter.sources.registry import SOURCES
from exporter.sources.table import SNAPSHOT_TYPES, Snapshots


def test_records_has_one_typed_field_per_row_of_the_table() -> None:
    # The fixed sources one field each; the bills, any number of them, one mapping by name.
    assert [f.name for f in fields(Snapshots)] == [*SOURCES, "bills"]
    for module in (opencost, dcgm, kueue, litellm):
        assert SOURCES[module.SOURCE] is module.KIND


def test_records_refuse_a_snapshot_of_the_wrong_source() -> None:
    wrong = dcgm.DcgmSnapshot(())
    with pytest.raises(TypeError, match="opencost: expected OpenCostSnapshot"):
        Snapshots.of({"opencost": wrong})
    assert Snapshots.of({"dcgm": wrong}).dcgm is wrong


def test_each_source_snapshot_type_is_its_rows() -> None:
    # The table checks snapshots without loading a source module: its types are the rows' own.
    assert list(SNAPSHOT_TYPES) == list(SOURCES)
    for name, kind in SOURCES.items():
        assert SNAPSHOT_TYPES[name] is kind.snapshot

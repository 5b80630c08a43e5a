"""The FOCUS bill bench's export reads through the real source (a smoke test, not a bench)."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

from bench.focus_bill import TAG, write_export
from exporter.calendar import Month
from exporter.config.bills import FocusExportConfig
from exporter.sources.bills import focus_export
from exporter.sources.bills.lines import BillKind
from exporter.sources.bills.settings import BillShared
from exporter.sources.reading import Reading


def test_the_bench_export_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "focus.csv.gz"
    assert write_export(path, 16) == 2 * 4 * 31  # two nodes, four resources each, 31 days
    cfg = FocusExportConfig.model_validate({"type": "focus", "path": str(path), "cluster_tag": TAG})
    reading = Reading.closed_month(Month.parse("2026-10", ZoneInfo("UTC")))
    shared = BillShared("bench", "USD", clock=lambda: 4e9)
    bill = focus_export.fetch(focus_export.build_client(cfg), cfg, shared, reading)
    # The tagged node and volume of each node, every day; the other clusters' rows left out.
    assert len(bill.lines) == 2 * 2 * 31
    assert {line.kind for line in bill.lines} == {BillKind.CLUSTER}
    assert len(bill.days_billed) == 31

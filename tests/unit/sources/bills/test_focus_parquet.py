"""FOCUS exports in Parquet: typed columns read as the CSV rows are, and a clear word without
the `parquet` extra."""

from __future__ import annotations

import os
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from exporter.calendar import Month
from exporter.config.bills import FocusExportConfig
from exporter.errors import RecordsDropped, UpstreamPayloadError
from exporter.sources.bills import focus_export
from exporter.sources.bills.settings import BillShared
from exporter.sources.reading import Reading

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

OCT = Reading.closed_month(Month.parse("2026-10", ZoneInfo("UTC")))
NOW = datetime(2026, 11, 3, 9, tzinfo=UTC).timestamp()
SHARED = BillShared("aws", "USD", clock=lambda: NOW)
TAG = "kubernetes.io/cluster/demo=owned"


def _write(path: Path, costs: list[Decimal]) -> Path:
    # As AWS writes FOCUS Parquet: decimal costs, UTC timestamps, Tags a map of strings.
    n = len(costs)
    days = [datetime(2026, 10, 1 + i % 28, tzinfo=UTC) for i in range(n)]
    table = pa.table(
        {
            "ChargePeriodStart": pa.array(days, pa.timestamp("ms", tz="UTC")),
            "ChargePeriodEnd": pa.array(
                [d.replace(day=d.day + 1) for d in days], pa.timestamp("ms", tz="UTC")
            ),
            "BilledCost": pa.array(costs, pa.decimal128(18, 6)),
            "BillingCurrency": ["USD"] * n,
            "ChargeCategory": ["Usage"] * n,
            "ProviderName": ["AWS"] * n,
            "ResourceId": [f"i-{i % 3}" for i in range(n)],
            "ServiceCategory": ["Compute"] * n,
            "Tags": pa.array(
                [[("kubernetes.io/cluster/demo", "owned")]] * n, pa.map_(pa.string(), pa.string())
            ),
        }
    )
    pq.write_table(table, path, row_group_size=5)
    os.utime(path, (NOW - 3600, NOW - 3600))
    return path


def _fetch(path: Path) -> object:
    cfg = FocusExportConfig.model_validate({"type": "focus", "path": str(path), "cluster_tag": TAG})
    return focus_export.fetch(focus_export.build_client(cfg), cfg, SHARED, OCT)


def test_parquet_rows_are_read_in_batches_as_csv_rows_are(tmp_path: Path) -> None:
    _write(tmp_path / "part-0.parquet", [Decimal("1.25"), Decimal("2.5"), Decimal("0.000001")] * 4)
    bill = _fetch(tmp_path)
    lines = bill.lines  # type: ignore[attr-defined]
    assert len(lines) == 12
    assert lines[0].day == date(2026, 10, 1) and lines[0].amount == 1.25
    assert sum(line.amount for line in lines) == pytest.approx(4 * 3.750001)


def test_a_bad_parquet_cost_is_dropped_and_counted(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.parquet", [Decimal("1"), Decimal("-3")])
    with pytest.raises(RecordsDropped) as err:
        _fetch(path)
    assert err.value.dropped == {"out_of_range": 1}


def test_without_the_extra_a_parquet_file_says_how_to_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "x.parquet", [Decimal("1")])
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(UpstreamPayloadError, match=r"install the `parquet` extra"):
        _fetch(path)


def test_a_corrupt_parquet_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 64)
    os.utime(path, (NOW - 3600, NOW - 3600))
    with pytest.raises(UpstreamPayloadError, match="not a readable Parquet file"):
        _fetch(path)

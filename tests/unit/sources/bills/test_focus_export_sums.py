"""Money through the FOCUS bill source is conserved: an export's kept lines add up, to the
cent, to the selected rows it was made of, whatever their order and split across files."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from exporter.calendar import Month
from exporter.config.bills import FocusExportConfig
from exporter.sources.bills import focus_export
from exporter.sources.bills.settings import BillShared
from exporter.sources.reading import Reading

OCT = Reading.closed_month(Month.parse("2026-10", ZoneInfo("UTC")))
NOW = 4e9
HEADER = (
    "ResourceId",
    "ServiceCategory",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "BilledCost",
    "BillingCurrency",
    "ChargeCategory",
    "ProviderName",
)
CENTS = st.decimals(min_value=0, max_value=10**6, places=2, allow_nan=False, allow_infinity=False)
ROW = st.tuples(
    st.sampled_from(["i-a", "i-b", "vol-c"]),
    st.sampled_from(["Compute", "Storage"]),
    st.integers(1, 31),
    CENTS,
)


@given(st.lists(ROW, max_size=40), st.integers(1, 3))
def test_kept_lines_add_up_to_the_selected_rows(
    rows: list[tuple[str, str, int, Decimal]], files: int
) -> None:
    expected: dict[tuple[int, str], Decimal] = defaultdict(Decimal)
    for resource, category, day, cost in rows:
        if category == "Compute":
            expected[(day, resource)] += cost
    with tempfile.TemporaryDirectory() as tmp:
        for part in range(files):
            _write(Path(tmp) / f"part-{part}.csv", rows[part::files])
        cfg = FocusExportConfig.model_validate({"type": "focus", "path": tmp})
        shared = BillShared("cloud", "USD", clock=lambda: NOW)
        bill = focus_export.fetch(focus_export.build_client(cfg), cfg, shared, OCT)
    got = {(line.day.day, line.resource_id): Decimal(str(line.amount)) for line in bill.lines}
    # One line per day and node, its sum exact to the cent (kept as Decimal until the end).
    assert got == expected


def _write(path: Path, rows: list[tuple[str, str, int, Decimal]]) -> None:
    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(HEADER)
    for resource, category, day, cost in rows:
        start = f"2026-10-{day:02d}T00:00:00Z"
        end = f"2026-10-{day + 1:02d}T00:00:00Z" if day < 31 else "2026-11-01T00:00:00Z"
        out.writerow([resource, category, start, end, str(cost), "USD", "Usage", "AWS"])
    path.write_text(text.getvalue())
    os.utime(path, (NOW - 3600, NOW - 3600))

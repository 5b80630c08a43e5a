"""FOCUS cost exports read into bill lines: columns, settling files, rows and refusals."""

from __future__ import annotations

import csv
import gzip
import io
import os
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from exporter.calendar import Month
from exporter.config.bills import FocusExportConfig
from exporter.errors import (
    ExchangeRateError,
    RecordsDropped,
    UpstreamIncomplete,
    UpstreamPayloadError,
    UpstreamUnavailable,
)
from exporter.sources.bills import focus_export
from exporter.sources.bills.lines import BillKind
from exporter.sources.bills.settings import BillShared
from exporter.sources.reading import Reading

OCT = Reading.closed_month(Month.parse("2026-10", ZoneInfo("UTC")))
NOW = datetime(2026, 11, 3, 9).timestamp()  # the test's clock, never the machine's
SHARED = BillShared("aws", "USD", {"EUR": 1.1}, clock=lambda: NOW)
# AWS Data Exports' FOCUS 1.0 names, in an order unlike ours, with columns we do not read.
HEADER = [
    "AvailabilityZone",
    "BilledCost",
    "BillingAccountId",
    "BillingCurrency",
    "BillingPeriodEnd",
    "BillingPeriodStart",
    "ChargeCategory",
    "ChargeClass",
    "ChargePeriodEnd",
    "ChargePeriodStart",
    "ProviderName",
    "ResourceId",
    "ServiceCategory",
    "ServiceName",
    "SubAccountId",
    "Tags",
]


def _row(day: int, cost: str, **over: str) -> dict[str, str]:
    row = {
        "AvailabilityZone": "eu-west-1a",
        "BilledCost": cost,
        "BillingAccountId": "123456789012",
        "BillingCurrency": "USD",
        "BillingPeriodEnd": "2026-11-01 00:00:00",
        "BillingPeriodStart": "2026-10-01 00:00:00",
        "ChargeCategory": "Usage",
        "ChargeClass": "",
        # AWS writes a space, no zone; a day's row ends at the next midnight.
        "ChargePeriodEnd": str(datetime(2026, 10, day) + timedelta(days=1)),
        "ChargePeriodStart": str(datetime(2026, 10, day)),
        "ProviderName": "AWS",
        "ResourceId": "i-0abc123",
        "ServiceCategory": "Compute",
        "ServiceName": "Amazon Elastic Compute Cloud",
        "SubAccountId": "123456789012",
        "Tags": '{"kubernetes.io/cluster/demo": "owned", "team": "ml"}',
    }
    return row | over


def _write(
    path: Path, rows: list[dict[str, str]], header: list[str] = HEADER, *, zipped: bool = False
) -> Path:
    text = io.StringIO()
    writer = csv.DictWriter(text, header, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    data = text.getvalue().encode()
    path.write_bytes(gzip.compress(data) if zipped else data)
    os.utime(path, (NOW - 3600, NOW - 3600))
    return path


def _cfg(path: Path, **extra: Any) -> FocusExportConfig:
    return FocusExportConfig.model_validate({"type": "focus", "path": str(path), **extra})


def _fetch(cfg: FocusExportConfig, reading: Reading = OCT) -> Any:
    client = focus_export.build_client(cfg)
    return focus_export.fetch(client, cfg, SHARED, reading)


def test_a_folder_of_plain_and_gzip_files_sums_per_day_and_node(tmp_path: Path) -> None:
    _write(
        tmp_path / "part-0.csv.gz", [_row(1, "10.5"), _row(1, "0.25"), _row(2, "3")], zipped=True
    )
    sub = tmp_path / "2026-10"
    sub.mkdir()
    _write(sub / "part-1.csv", [_row(2, "1", ResourceId="i-0def456"), _row(31, "2")])
    _write(tmp_path / "notes.txt", [_row(3, "99")])  # not an export file
    bill = _fetch(_cfg(tmp_path))
    assert [(line.day, line.resource_id, line.amount) for line in bill.lines] == [
        (date(2026, 10, 1), "i-0abc123", 10.75),
        (date(2026, 10, 2), "i-0abc123", 3.0),
        (date(2026, 10, 2), "i-0def456", 1.0),
        (date(2026, 10, 31), "i-0abc123", 2.0),
    ]
    assert all(line.kind is BillKind.CLUSTER and line.provider == "aws" for line in bill.lines)
    # The export reaches its billing period's end on the 31st: the whole month is billed.
    assert bill.days_billed == {date(2026, 10, d) for d in range(1, 32)}


def test_rows_outside_the_month_are_skipped_not_dropped(tmp_path: Path) -> None:
    rows = [_row(5, "1"), _row(5, "7", ChargePeriodStart="2026-09-30T22:00:00Z")]
    bill = _fetch(_cfg(_write(tmp_path / "x.csv", rows)))
    assert [line.amount for line in bill.lines] == [1.0] and bill.dropped == 0
    # Only up to the 5th so far: the days before it are whole, the 5th may grow.
    assert bill.days_billed == {date(2026, 10, d) for d in range(1, 5)}


def test_the_cluster_tag_picks_the_cluster_rows(tmp_path: Path) -> None:
    rows = [_row(1, "4"), _row(1, "9", Tags='{"team": "web"}', ResourceId="i-other")]
    bill = _fetch(
        _cfg(_write(tmp_path / "x.csv", rows), cluster_tag="kubernetes.io/cluster/demo=owned")
    )
    assert [(line.resource_id, line.amount) for line in bill.lines] == [("i-0abc123", 4.0)]


def test_llm_rows_are_kept_as_the_providers_bill(tmp_path: Path) -> None:
    llm = _row(
        1,
        "2.5",
        ServiceCategory="AI and Machine Learning",
        ServiceName="Amazon Bedrock",
        ResourceId="",
    )
    bill = _fetch(_cfg(_write(tmp_path / "x.csv", [llm, _row(1, "1", ServiceCategory="Storage")])))
    assert [(line.kind, line.amount, line.scope) for line in bill.lines] == [
        (BillKind.LLM, 2.5, "123456789012")
    ]


def test_a_file_missing_mandatory_columns_is_refused_naming_them(tmp_path: Path) -> None:
    header = [c for c in HEADER if c not in ("BilledCost", "BillingCurrency")]
    path = _write(tmp_path / "x.csv", [_row(1, "1")], header)
    with pytest.raises(
        UpstreamPayloadError,
        match=r"x\.csv: missing mandatory FOCUS column\(s\): BilledCost, BillingCurrency",
    ):
        _fetch(_cfg(path))


def test_a_file_still_being_written_is_not_read(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.csv", [_row(1, "1")])
    os.utime(path, (NOW - 30, NOW - 30))
    with pytest.raises(
        UpstreamIncomplete,
        match=r"x.csv was modified 30s ago, within settle \(2m\): still being written",
    ):
        _fetch(_cfg(tmp_path))


@pytest.mark.parametrize(
    ("cost", "reason"),
    [("-5", "out_of_range"), ("five", "wrong_type"), ("", "missing_field"), ("NaN", "non_finite")],
)
def test_a_bad_cost_is_dropped_counted_and_fails_the_read(
    tmp_path: Path, cost: str, reason: str
) -> None:
    path = _write(tmp_path / "x.csv", [_row(1, cost), _row(2, "1")])
    with pytest.raises(RecordsDropped, match="row 2") as err:
        _fetch(_cfg(path))
    assert err.value.dropped == {reason: 1}


def test_credits_and_corrections_may_be_negative(tmp_path: Path) -> None:
    rows = [
        _row(1, "10"),
        _row(1, "-2", ChargeCategory="Credit"),
        _row(1, "-1", ChargeClass="Correction"),
    ]
    bill = _fetch(_cfg(_write(tmp_path / "x.csv", rows)))
    assert sorted((line.description, line.amount) for line in bill.lines) == [
        ("Credit", -2.0),
        ("Usage", 9.0),
    ]


def test_a_bill_in_an_unknown_currency_is_refused_whole(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.csv", [_row(1, "1"), _row(1, "1", BillingCurrency="CHF")])
    with pytest.raises(ExchangeRateError, match="billed in CHF, which is not USD and has no rate"):
        _fetch(_cfg(path))


def test_a_converting_currency_is_kept_as_billed(tmp_path: Path) -> None:
    bill = _fetch(_cfg(_write(tmp_path / "x.csv", [_row(1, "1", BillingCurrency="eur")])))
    assert [line.currency for line in bill.lines] == ["EUR"]


def test_azure_byte_order_mark_and_1_3_provider_column(tmp_path: Path) -> None:
    header = [("ServiceProviderName" if c == "ProviderName" else c) for c in HEADER]
    row = _row(1, "1") | {
        "ServiceProviderName": "Microsoft",
        "ChargePeriodStart": "2026-10-01T00:00:00Z",
    }
    path = _write(tmp_path / "x.csv", [row], header)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    os.utime(path, (NOW - 3600, NOW - 3600))
    bill = _fetch(_cfg(path))
    assert [line.provider for line in bill.lines] == ["microsoft"]


def test_a_missing_folder_marks_the_source_down(tmp_path: Path) -> None:
    with pytest.raises(UpstreamUnavailable, match="No such file"):
        _fetch(_cfg(tmp_path / "absent"))


def test_a_corrupt_gzip_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.csv.gz"
    path.write_bytes(b"\x1f\x8b" + b"\x00" * 40)
    os.utime(path, (NOW - 3600, NOW - 3600))
    with pytest.raises(UpstreamPayloadError, match=r"x\.csv\.gz"):
        _fetch(_cfg(path))


def test_a_bad_row_of_another_resource_is_not_this_bills_fault(tmp_path: Path) -> None:
    rows = [_row(1, "1"), _row(1, "x", ServiceCategory="Storage", ChargePeriodStart="soon")]
    bill = _fetch(_cfg(_write(tmp_path / "x.csv", rows)))
    assert [line.amount for line in bill.lines] == [1.0] and bill.dropped == 0


def test_tags_that_are_not_json_may_hide_a_cluster_row_so_it_counts(tmp_path: Path) -> None:
    rows = [_row(1, "1"), _row(1, "2", Tags="kubernetes.io/cluster/demo=owned")]
    cfg = _cfg(_write(tmp_path / "x.csv", rows), cluster_tag="kubernetes.io/cluster/demo=owned")
    with pytest.raises(RecordsDropped, match="Tags is not a JSON object") as err:
        _fetch(cfg)
    assert err.value.dropped == {"wrong_type": 1}


@pytest.mark.parametrize(("code", "reason"), [("", "missing_field"), ("US$", "wrong_type")])
def test_a_row_without_a_currency_code_is_dropped(tmp_path: Path, code: str, reason: str) -> None:
    path = _write(tmp_path / "x.csv", [_row(1, "1", BillingCurrency=code), _row(2, "1")])
    with pytest.raises(RecordsDropped) as err:
        _fetch(_cfg(path))
    assert err.value.dropped == {reason: 1}

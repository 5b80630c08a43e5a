"""FOCUS export: demo rows follow FOCUS 1.2, foot to the report and mean what they say."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from chargeback_demo.exporter import main as demo_main
from chargeback_demo.stack import DemoStack
from exporter.cli import main as exporter_main
from exporter.clock import fixed_clock
from exporter.finance.focus.columns import COLUMNS
from tests.conftest import CLOCK
from tests.support.focus_spec import violations

# Two instants after October 2026 has closed in Madrid, at different hours of the day (the
# fakes' Kueue usage, DCGM and team budgets differ between them).
LATER = fixed_clock(datetime(2026, 11, 2, 3, 10, tzinfo=UTC))


def _run(args: list[str], clock: object, capsys: pytest.CaptureFixture[str]) -> str:
    assert demo_main([*args], clock) == 0  # type: ignore[arg-type]
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def october() -> str:
    """The demo's October FOCUS export, read once at the tests' frozen time."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert demo_main(["report", "--format", "focus", "--month", "2026-10"], CLOCK) == 0
    return out.getvalue()


def _rows(text: str) -> tuple[list[str], list[dict[str, str | None]]]:
    reader = csv.DictReader(io.StringIO(text))
    rows = [{k: (v if v != "" else None) for k, v in row.items()} for row in reader]
    return list(reader.fieldnames or []), rows


def test_every_row_of_the_demo_month_follows_focus_1_2(october: str) -> None:
    header, rows = _rows(october)
    assert header == list(COLUMNS)
    assert len(rows) > 31
    problems = {p for row in rows for p in violations(header, row)}
    assert problems == set()
    assert {r["ChargePeriodStart"] for r in rows} >= {"2026-09-30T22:00:00Z"}
    # The day summer time ends is 25 hours long, and its rows say so.
    assert {
        (r["ChargePeriodStart"], r["ChargePeriodEnd"])
        for r in rows
        if r["x_ChargePeriodLocalDate"] == "2026-10-25"
    } == {("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")}
    assert {r["ChargeCategory"] for r in rows} == {"Usage", "Adjustment"}


def test_the_validator_catches_what_the_spec_forbids(october: str) -> None:
    header, rows = _rows(october)
    good = next(r for r in rows if r["ChargeCategory"] == "Usage")
    assert violations(header, good) == []
    broken = [
        {**good, "ChargeCategory": "Fee"},
        {**good, "BilledCost": "+1.00"},
        {**good, "ChargePeriodStart": "2026-10-01 00:00:00"},
        {**good, "ConsumedQuantity": None},
        {**good, "ServiceSubcategory": "Generative AI"},
        {**good, "ListCost": "0.01"},
        {**good, "Tags": '{"team": ["a"]}'},
    ]
    for row in broken:
        assert violations(header, row), row
    assert violations([c for c in header if c != "ProviderName"], good)


def test_the_rows_foot_to_the_report_total_to_the_cent(
    october: str, capsys: pytest.CaptureFixture[str]
) -> None:
    report = json.loads(_run(["report", "--format", "json", "--month", "2026-10"], CLOCK, capsys))
    _, rows = _rows(october)
    total = sum((Decimal(r["BilledCost"] or "0") for r in rows), Decimal(0))
    assert total == Decimal(str(report["total"])).quantize(Decimal("0.01"))
    for team in report["teams"]:
        for component, amount in team["components"].items():
            days = [
                Decimal(r["BilledCost"] or "0")
                for r in rows
                if r["SubAccountId"] == team["team"] and r["x_Component"] == component
            ]
            assert sum(days, Decimal(0)) == Decimal(str(amount)).quantize(Decimal("0.01"))


@pytest.mark.parametrize("name", ["product", "environment"])
def test_the_rows_foot_by_every_dimension_within_the_stated_cent(
    name: str, october: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every row carries every dimension; summed by one, the rows give `report --by NAME`'s
    # cells, but where two reports round the same money apart: there a cent (docs/report.md).
    args = ["report", "--format", "json", "--month", "2026-10", "--by", name]
    by = json.loads(_run(args, CLOCK, capsys))
    _, rows = _rows(october)
    sums: dict[tuple[str, str], Decimal] = {}
    for r in rows:
        tags = json.loads(r["Tags"] or "{}")
        assert set(tags) == {"team", "product", "environment"}
        key = (tags[name], r["x_Component"] or "")
        sums[key] = sums.get(key, Decimal(0)) + Decimal(r["BilledCost"] or "0")
    off = []
    for row in by["values"]:
        for component, amount in row["components"].items():
            printed = Decimal(str(amount)).quantize(Decimal("0.01"))
            gap = sums.get((row["value"], component), Decimal(0)) - printed
            assert abs(gap) <= Decimal("0.01")
            off.append(gap)
    assert sum(off, Decimal(0)) == 0  # both foot to the same total
    assert sum(1 for gap in off if gap) <= 4
    # --by changes nothing: the export carries every dimension already.
    focus = ["report", "--format", "focus", "--month", "2026-10", "--by", name]
    assert _run(focus, CLOCK, capsys) == october


def test_a_closed_month_prints_the_same_bytes_whenever_it_runs(
    october: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for fmt in ("table", "csv", "json"):
        args = ["report", "--format", fmt, "--month", "2026-10"]
        assert _run(args, CLOCK, capsys) == _run(args, LATER, capsys)
    later = _run(["report", "--format", "focus", "--month", "2026-10"], LATER, capsys)
    assert later == october
    table = _run(["report", "--month", "2026-10"], CLOCK, capsys)
    assert "as they are when the report runs" in table
    assert "2026-11" not in table  # no instant of the run is printed


def test_no_usage_row_is_negative_and_transfers_are_adjustments(october: str) -> None:
    _, rows = _rows(october)
    usage = [r for r in rows if r["ChargeCategory"] == "Usage"]
    assert usage and all(not (r["BilledCost"] or "").startswith("-") for r in usage)
    # Every quantity is written as a decimal, as FOCUS types it.
    assert all("." in (r["ConsumedQuantity"] or "") for r in usage)
    transfers = {"idle_share", "borrowed", "lent", "llm_serving"}
    assert {r["x_Component"] for r in rows if r["ChargeCategory"] == "Usage"} & transfers == set()
    # Search serves llama-3-70b: its serving cost moved onto the senders is a credit, an
    # Adjustment with no quantity, on the model it serves.
    credits = [
        r for r in rows if r["x_Component"] == "llm_serving" and r["SubAccountId"] == "search"
    ]
    assert credits and {r["ChargeCategory"] for r in credits} == {"Adjustment"}
    assert sum(Decimal(r["BilledCost"] or "0") for r in credits) < 0
    assert {r["ConsumedQuantity"] for r in credits} == {None}
    assert {r["ResourceName"] for r in credits} == {"llama-3-70b"}


def test_who_provides_publishes_and_invoices(october: str) -> None:
    _, rows = _rows(october)
    assert {r["ProviderName"] for r in rows} == {"Demo ML Platform"}
    assert {r["InvoiceIssuerName"] for r in rows} == {"Demo ML Platform"}
    publishers = {(r["x_Component"], r["PublisherName"]) for r in rows}
    assert ("llm_external", "OpenAI") in publishers
    assert ("llm_serving", "Meta") in publishers
    assert {p for c, p in publishers if not (c or "").startswith("llm_")} == {"Demo ML Platform"}
    assert {r["InvoiceId"] for r in rows} == {"demo-madrid-2026-10"}
    assert {(r["x_Cluster"], r["x_MonthToDate"]) for r in rows} == {("demo-madrid", "false")}


def test_the_month_to_date_is_exported_and_marked_as_such(
    capsys: pytest.CaptureFixture[str],
) -> None:
    header, rows = _rows(_run(["report", "--format", "focus"], CLOCK, capsys))
    assert {p for row in rows for p in violations(header, row)} == set()
    assert {(r["InvoiceId"], r["x_MonthToDate"]) for r in rows} == {(None, "true")}
    # From Madrid's 1 November to now: the last day is today so far.
    assert min(r["ChargePeriodStart"] or "" for r in rows) == "2026-10-31T23:00:00Z"
    assert max(r["ChargePeriodEnd"] or "" for r in rows) == "2026-11-15T12:30:00Z"
    assert {r["BillingPeriodEnd"] for r in rows} == {"2026-11-30T23:00:00Z"}
    report = json.loads(_run(["report", "--format", "json"], CLOCK, capsys))
    total = sum((Decimal(r["BilledCost"] or "0") for r in rows), Decimal(0))
    assert total == Decimal(str(report["total"])).quantize(Decimal("0.01"))


def test_output_writes_the_data_and_its_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["report", "--format", "focus", "--month", "2026-10", "--output", str(tmp_path)]
    assert demo_main(args, CLOCK) == 0
    capsys.readouterr()
    data = tmp_path / "focus-demo-madrid-2026-10.csv"
    metadata = json.loads((tmp_path / "focus-demo-madrid-2026-10-metadata.json").read_text())
    schema = metadata["Schema"]
    assert (metadata["DataGenerator"], schema["FocusVersion"]) == ("gpu-chargeback-exporter", "1.2")
    assert schema["CreationDate"] == "2026-11-15T12:30:00Z"
    assert [c["ColumnName"] for c in schema["ColumnDefinition"]] == list(COLUMNS)
    assert metadata["SchemaId"] == schema["SchemaId"]
    (location,) = metadata["DataLocation"]
    lines = data.read_text().splitlines()
    assert location == {
        "FilePath": data.name,
        "TotalRows": len(lines) - 1,
        "TotalBytes": data.stat().st_size,
    }
    assert demo_main(["report", "--format", "csv", "--output", str(tmp_path)], CLOCK) == 2


def test_two_clusters_exports_concatenate_without_colliding_ids(
    stack: DemoStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exports = []
    for cluster in ("prod-madrid", "prod-dublin"):
        raw = yaml.safe_load(stack.write_config().read_text())
        raw["report"]["cluster"] = cluster
        path = tmp_path / f"{cluster}.yaml"
        path.write_text(yaml.safe_dump(raw), encoding="utf-8")
        args = ["--config.file", str(path), "report", "--format", "focus", "--month", "2026-10"]
        assert exporter_main(args, CLOCK) == 0
        exports.append(_rows(capsys.readouterr().out)[1])
    madrid, dublin = exports
    for column in ("BillingAccountId", "InvoiceId", "ResourceId", "x_Cluster"):
        ids = [{r[column] for r in rows if r[column]} for rows in exports]
        assert ids[0] and ids[1] and not ids[0] & ids[1], column
    # One cluster's rows are told apart by team, component, resource, day and the dimensions'
    # values (Tags); the two clusters' rows, concatenated, still are.
    key = (
        "BillingAccountId",
        "SubAccountId",
        "x_Component",
        "ResourceId",
        "ChargePeriodStart",
        "Tags",
    )
    keys = [tuple(r[k] for k in key) for r in [*madrid, *dublin]]
    assert len(keys) == len(set(keys)) == len(madrid) + len(dublin)

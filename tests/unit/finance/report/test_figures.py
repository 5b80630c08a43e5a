"""The finance report: printed figures foot, budgets by kind, the month's idle, closed months."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import Config
from exporter.finance.closed_month import closed_month
from exporter.finance.report.figures import build_report
from exporter.finance.report.footing import cents
from exporter.finance.report.formats import format_report
from exporter.ledger.attribution import IDLE, UNALLOCATED
from exporter.ledger.costs.ledger import Ledger
from tests.conftest import FIXED_NOW
from tests.support.properties import examples


def _ledger(costs: dict[tuple[str, str], float]) -> Ledger:
    ledger = Ledger()
    for (team, component), amount in costs.items():
        ledger.add(team, component, amount)
    return ledger


def _config(zone: str) -> Config:
    return Config.model_validate({"timezone": zone})


def test_three_thirds_foot_to_the_total() -> None:
    # 45.22 split three ways: 15.0733... each. Printed alone each is 15.07 and the column adds
    # to 45.21 under a total of 45.22; footed, the first team carries the cent.
    third = 45.22 / 3
    report = build_report(
        _ledger({(t, "gpu"): third for t in ("a", "b", "c")}), "EUR", "2026-10", {}
    )
    assert [r.total for r in report.rows[:3]] == [
        Decimal("15.08"),
        Decimal("15.07"),
        Decimal("15.07"),
    ]
    assert report.columns["gpu"] == report.total == Decimal("45.22")
    table = format_report(report, "table")
    assert "15.08" in table
    assert table.splitlines()[-1].split()[-1] == "45.22"


def test_gpu_and_llm_budgets_have_their_own_columns() -> None:
    ledger = _ledger({("research", "gpu"): 10.0, ("vision", "gpu"): 5.0})
    budgets = {("research", "gpu"): 2300.0, ("research", "llm"): 400.0, ("vision", "llm"): 150.0}
    report = build_report(ledger, "EUR", "2026-10", budgets)
    rows = {r.team: r for r in report.rows}
    assert rows["research"].budget_gpu == Decimal("2300.00")
    assert rows["research"].budget_llm == Decimal("400.00")
    assert rows["vision"].budget_gpu is None
    assert rows["vision"].budget_llm == Decimal("150.00")
    data = list(csv.DictReader(io.StringIO(format_report(report, "csv"))))
    assert "budget" not in data[0]
    assert data[0]["budget_gpu"] == "2300.00"
    assert data[0]["budget_llm"] == "400.00"
    # The total row adds what is printed above it: 2300 for GPU, 400 + 150 for LLM.
    assert (data[-1]["budget_gpu"], data[-1]["budget_llm"]) == ("2300.00", "550.00")


def test_idle_header_names_the_shared_part_under_proportional() -> None:
    # 512 of idle: 64 nobody used stays on __idle__, 448 was shared by usage (300 + 148).
    ledger = _ledger(
        {
            ("research", "gpu"): 1000.0,
            ("research", "idle_share"): 300.0,
            ("vision", "gpu"): 500.0,
            ("vision", "idle_share"): 148.0,
            (IDLE, "gpu"): 64.0,
        }
    )
    report = build_report(ledger, "EUR", "2026-10", {}, idle=512.0)
    assert (report.idle, report.idle_shared) == (Decimal("512.00"), Decimal("448.00"))
    assert "idle: 512.00 (448.00 shared onto teams)" in format_report(report, "table")


def test_idle_header_counts_what_a_reservation_absorbed() -> None:
    # Reservation: OpenCost saw 512 of idle. 64 of GPU idle is left on __idle__, 100 of CPU and
    # RAM idle was shared as idle_share, and the other 348 of GPU idle now sits in the
    # reservations (the teams' gpu component): 448 shared onto teams, not 100.
    ledger = _ledger(
        {
            ("research", "gpu"): 1348.0,
            ("research", "idle_share"): 100.0,
            (IDLE, "gpu"): 64.0,
        }
    )
    report = build_report(ledger, "EUR", "2026-10", {}, idle=512.0)
    assert (report.idle, report.idle_shared) == (Decimal("512.00"), Decimal("448.00"))
    # Without OpenCost's figure only what the ledger names as idle is known.
    assert build_report(ledger, "EUR", "2026-10", {}).idle == Decimal("164.00")


teams = st.sampled_from(["a", "b", "c", "d", IDLE, UNALLOCATED])
components = st.sampled_from(["gpu", "cpu", "ram", "idle_share", "borrowed", "llm_serving"])
amounts = st.floats(min_value=-50, max_value=5000, allow_nan=False).filter(lambda v: v != 0)


@settings(max_examples=examples(150), deadline=None)
@given(st.dictionaries(st.tuples(teams, components), amounts, max_size=30))
def test_every_printed_row_and_column_foots(costs: dict[tuple[str, str], float]) -> None:
    ledger = _ledger(costs)
    report = build_report(ledger, "EUR", "2026-10", {})
    exact = sum((cents(v) for v in ledger.costs.values()), Decimal(0))
    assert report.total * 100 == exact.quantize(Decimal(1), rounding="ROUND_HALF_UP")
    for row in report.rows:
        assert sum(row.costs.values(), Decimal(0)) == row.total
    for c in report.components:
        assert sum(r.costs[c] for r in report.rows) == report.columns[c]
    assert sum(r.total for r in report.rows) == report.total
    assert sum(report.columns.values(), Decimal(0)) == report.total
    # What finance reads, the CSV, foots the same way.
    lines = list(csv.DictReader(io.StringIO(format_report(report, "csv"))))
    for line in lines:
        cells = sum(Decimal(line[c]) for c in report.components)
        assert cells == Decimal(line["total"])
    for c in report.components:
        assert sum(Decimal(line[c]) for line in lines[:-1]) == Decimal(lines[-1][c])


@pytest.mark.parametrize(
    ("zone", "start", "end", "read_at"),
    [
        # East of UTC: the local month ends first, 22:00 UTC on the 31st (summer time is over
        # on 25 October 2026, so 23:00).
        (
            "Europe/Madrid",
            datetime(2026, 9, 30, 22, tzinfo=UTC),
            datetime(2026, 10, 31, 23, tzinfo=UTC),
            datetime(2026, 10, 31, 22, 59, 59, 999999, tzinfo=UTC),
        ),
        # West of UTC: the UTC month ends first, so LiteLLM's UTC dates stay in October.
        (
            "America/Los_Angeles",
            datetime(2026, 10, 1, 7, tzinfo=UTC),
            datetime(2026, 11, 1, 7, tzinfo=UTC),
            datetime(2026, 10, 31, 23, 59, 59, 999999, tzinfo=UTC),
        ),
        # Fourteen hours ahead: the two last days still overlap.
        (
            "Pacific/Kiritimati",
            datetime(2026, 9, 30, 10, tzinfo=UTC),
            datetime(2026, 10, 31, 10, tzinfo=UTC),
            datetime(2026, 10, 31, 9, 59, 59, 999999, tzinfo=UTC),
        ),
    ],
)
def test_a_closed_month_is_read_on_its_last_day_locally_and_in_utc(
    zone: str, start: datetime, end: datetime, read_at: datetime
) -> None:
    reading = closed_month("2026-10", _config(zone).zone, FIXED_NOW)
    assert (reading.month.start, reading.month.end, reading.at) == (start, end, read_at)
    local = reading.at.astimezone(ZoneInfo(zone))
    assert (local.month, local.day) == (10, 31)
    assert (reading.at.astimezone(UTC).month, reading.at.astimezone(UTC).day) == (10, 31)


@pytest.mark.parametrize("text", ["2026-11", "2026-12", "2026-1", "2026-13", "October"])
def test_a_month_that_is_not_closed_or_not_a_month_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"not over yet|not a month"):
        closed_month(text, _config("Europe/Madrid").zone, FIXED_NOW)

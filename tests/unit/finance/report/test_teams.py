"""The team table's operating columns, worked by hand for a closed month of 744 hours."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.calendar import Month
from exporter.finance.report.teams import (
    Measure,
    TeamUsage,
    period_hours,
    printed_usage,
    team_usage,
    usage_json,
)
from exporter.ledger.attribution import OTHER
from exporter.ledger.costs.gpus import TeamIdleGpuHours
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.costs.quota import QueueQuota
from exporter.ledger.llm import TeamModelUsage
from exporter.ledger.result import Chargeback, GpuFigures, LlmFigures
from exporter.ledger.units.economics import UnitEconomics
from exporter.sources.reading import Reading

UTC = ZoneInfo("UTC")


def _quota(team: str, queue: str, resource: str, nominal: float) -> QueueQuota:
    return QueueQuota(team, queue, "all", "h100", resource, nominal, 0.0, 0.0, 0.0, 0.0, 0.0)


def _chargeback() -> Chargeback:
    # October 2026 in UTC: 31 days, 744 hours.
    reading = Reading.closed_month(Month.parse("2026-10", UTC))
    usage = {
        ("research", "gpt-4o"): TeamModelUsage(1.0, 1000, 500, 3),
        ("research", "llama"): TeamModelUsage(None, 200, 50, 1),
        ("tiny", "gpt-4o"): TeamModelUsage(0.1, 10, 5, 1),
    }
    idle = (TeamIdleGpuHours("research", 100.0, None), TeamIdleGpuHours("tiny", 6.0, None))
    return Chargeback(
        reading=reading,
        budgets={},
        units=UnitEconomics(),
        month=Ledger(),
        quota=(
            # research holds 1.5 + 0.5 = 2 GPUs over two queues; its CPU quota is not a GPU.
            _quota("research", "research-train", "nvidia.com/gpu", 1.5),
            _quota("research", "research-serve", "nvidia.com/gpu", 0.5),
            _quota("research", "research-train", "cpu", 64.0),
            _quota("vision", "vision", "nvidia.com/gpu", 4.0),
        ),
        gpus=GpuFigures(teams=(), idle_hours=idle, endpoints={}),
        folded_teams=("tiny",),
        llm=LlmFigures(usage=usage, budgets=()),
        gpu_hours={"research": 1116.0, "vision": 744.0, "tiny": 10.0},
    )


def test_figures_per_team_worked_by_hand() -> None:
    chargeback = _chargeback()
    assert period_hours(chargeback) == 744.0
    usage = team_usage(chargeback)
    research = usage["research"]
    assert research.gpu_hours == 1116.0
    assert research.idle_gpu_hours == 100.0
    assert research.guaranteed_gpus == 2.0
    # 1000 + 500 + 200 + 50 tokens.
    assert research.tokens == 1750
    # 1116 GPU-hours of 2 GPUs x 744 hours = 1488 guaranteed: 75 %.
    assert research.occupancy_percent == pytest.approx(75.0)
    # vision used 744 of 4 x 744 = 2976: 25 %; no DCGM history, no tokens.
    vision = usage["vision"]
    assert vision.occupancy_percent == pytest.approx(25.0)
    assert (vision.idle_gpu_hours, vision.tokens) == (None, None)
    # A folded team counts under __other__, as its cost does.
    assert "tiny" not in usage
    other = usage[OTHER]
    assert (other.gpu_hours, other.idle_gpu_hours, other.tokens) == (10.0, 6.0, 15)
    assert other.occupancy_percent is None


def test_cells_totals_and_json() -> None:
    usage = team_usage(_chargeback())
    rows = [usage["research"], usage["vision"], None, usage[OTHER]]
    printed = printed_usage(rows)
    assert printed.rows[0] == ("1116.00", "100.00", "75.0", "2.00", "1750")
    assert printed.rows[2] == ("", "", "", "", "")
    # 1116 + 744 + 10 GPU-hours; 100 + 6 idle; 2 + 4 GPUs; 1750 + 15 tokens.
    assert printed.total == ("1870.00", "106.00", "", "6.00", "1765")
    grouped = printed_usage(rows, _grouped)
    assert grouped.rows[0] == ("1,116.00", "100.00", "75.0", "2.00", "1,750")
    assert usage_json(usage["vision"]) == {
        "gpu_hours": 744.0,
        "idle_gpu_hours": None,
        "occupancy_percent": 25.0,
        "guaranteed_gpus": 4.0,
        "tokens": None,
    }
    assert usage_json(None)["gpu_hours"] is None


def test_the_month_to_date_counts_the_hours_so_far() -> None:
    usage = TeamUsage(gpu_hours=36.0, guaranteed_gpus=3.0, hours=24.0)
    # 36 GPU-hours of 3 x 24 = 72: 50 %.
    assert usage.occupancy_percent == pytest.approx(50.0)
    assert TeamUsage(gpu_hours=1.0, guaranteed_gpus=0.0, hours=24.0).occupancy_percent is None


def _grouped(measure: Measure, value: float) -> str:
    if measure is Measure.PERCENT:
        return format(value, ",.1f")
    return format(value, "," if measure is Measure.COUNT else ",.2f")


def test_gpu_hours_foot_to_their_printed_total() -> None:
    # Each row rounded alone prints 100.01 + 100.01 + 65.52 = 265.54 over a total of 265.53
    # (the exact sum, 265.525, rounded once): the largest remainders take the hundredths the
    # total has, ties to the earlier row, as money's footing does.
    rows = [TeamUsage(gpu_hours=h) for h in (100.005, 100.005, 65.515)]
    printed = printed_usage(rows)
    cells = [r[0] for r in printed.rows]
    assert printed.total[0] == "265.53"
    assert cells == ["100.01", "100.01", "65.51"]


@given(st.lists(st.one_of(st.none(), st.floats(0, 10_000, allow_nan=False)), max_size=12))
def test_every_amount_column_foots(hours: list[float | None]) -> None:
    rows = [None if h is None else TeamUsage(gpu_hours=h, guaranteed_gpus=h) for h in hours]
    printed = printed_usage(rows)
    for column in (0, 3):
        cells = [r[column] for r in printed.rows if r[column]]
        total = printed.total[column]
        assert (total == "") is (not cells)
        if cells:
            assert sum(round(float(c) * 100) for c in cells) == round(float(total) * 100)

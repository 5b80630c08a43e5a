"""A period's GPU operation in the report: filled from history, or said in words."""

from __future__ import annotations

import json
from dataclasses import replace

from exporter.finance.report.figures import build_report
from exporter.finance.report.formats import format_report
from exporter.finance.report.gpu_month import GPU_PROMETHEUS, NO_HISTORY, with_gpu_month
from exporter.finance.report.teams import TeamUsage
from exporter.ledger.costs.ledger import Ledger
from exporter.sources.gpu_history_records import GpuMonth, TeamGpuMonth


def test_history_fills_the_idle_gpu_hours_the_join_did_not_have() -> None:
    report = build_report(Ledger({("research", "gpu"): 100.0}), "EUR", "2026-10", {}, closed=True)
    month = GpuMonth((TeamGpuMonth("research", 1105.0, 0.4067, 2086.0, 521_500.0),), {})
    filled = with_gpu_month(report, month, GPU_PROMETHEUS)
    assert filled.usage["research"].idle_gpu_hours == 1105.0
    text = format_report(filled, "table")
    assert (
        "GPU operation, closed month (from the exporter's own series in report.prometheus)" in text
    )
    row = next(ln for ln in text.splitlines() if ln.startswith("research") and "2,086" in ln)
    assert row.split()[-5:] == ["1,105.00", "40.7", "%", "2,086.00", "521.50"]
    data = json.loads(format_report(filled, "json"))
    assert data["gpu_operation"]["teams"][0]["energy_kwh"] == 2086.0
    assert data["teams"][0]["idle_gpu_hours"] == 1105.0


def test_the_joins_own_idle_hours_stay() -> None:
    report = build_report(Ledger({("research", "gpu"): 100.0}), "EUR", "2026-10", {})
    report = replace(report, usage={"research": TeamUsage(idle_gpu_hours=3.0)})
    month = GpuMonth((TeamGpuMonth("research", 9.0, None, None, None),), {})
    assert with_gpu_month(report, month, GPU_PROMETHEUS).usage["research"].idle_gpu_hours == 3.0


def test_without_history_the_report_says_so_in_words() -> None:
    report = build_report(Ledger({("research", "gpu"): 100.0}), "EUR", "2026-10", {}, closed=True)
    said = with_gpu_month(report, None, NO_HISTORY)
    text = format_report(said, "table")
    assert "idle GPU-hours, utilisation, energy and CO2e not known: DCGM read directly" in text
    assert json.loads(format_report(said, "json"))["gpu_operation"] == {
        "basis": NO_HISTORY,
        "teams": [],
    }

"""Advice in the report: the text section, the CSV tables, the JSON, and one team's own."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest
from babel import Locale

from exporter.config.advice import AdviceConfig
from exporter.finance.report.figures import Report, build_report
from exporter.finance.report.formats import format_report
from exporter.finance.report.numbers import Numbers
from exporter.ledger.advice import AdviceSet, Prices, advise
from exporter.ledger.costs.ledger import Ledger
from exporter.sources.dcgm_history.records import DeviceHistory, History, QueueHistory, Spread

FULL = 2016


def _advice() -> AdviceSet:
    vllm = DeviceHistory(
        "ns-search", "vllm-llama", "vllm", "n1", "3", "GPU-3", "NVIDIA H100 80GB HBM3", "", (),
        Spread(7_000, 7_300, 7_500, FULL), Spread(0.02, 0.02, 0.02, FULL), 1.0,
    )  # fmt: skip
    thin = replace(vllm, namespace="=cmd|calc", framebuffer=Spread(1, 1, 1, 12))
    queue = QueueHistory("cq-search", "h100", "nvidia.com/gpu", 4.0, Spread(1.0, 1.4, 1.4, FULL))
    return advise(
        History(7 * 86_400.0, 300.0, (vllm, thin), (queue,)),
        AdviceConfig(),
        team_of=lambda d: "search",
        queue_team=lambda q: "search",
        prices=Prices(lambda m: 1.40, lambda f: 1.40),
        charges_quota=True,
    )


def _report() -> Report:
    ledger = Ledger({("search", "gpu"): 1000.0, ("vision", "gpu"): 500.0})
    report = build_report(ledger, "EUR", "2026-03", {}, closed=True)
    return replace(report, advice=_advice())


def test_the_text_report_has_the_advice_largest_first_and_the_withheld() -> None:
    text = format_report(_report(), "table", numbers=Numbers(Locale("en"), "EUR"))
    section = text.split("Right-sizing advice over the last 7 days", 1)[1]
    rows = [ln for ln in section.splitlines() if ln.startswith("search")]
    assert [r.split("  ")[0:1] for r in rows[:3]] == [["search"]] * 3
    assert "give back 2 GPUs" in rows[0] and "2,044.00" in rows[0]
    assert "release the GPU" in rows[1] and "1,022.00" in rows[1]
    assert "fits 1g.10gb" in rows[2] and "876.00" in rows[2]
    assert "No advice, history too thin or bad:" in section
    assert "thin_history" in section


def test_csv_writes_each_advice_table_with_safe_names() -> None:
    found = list(csv.DictReader(io.StringIO(format_report(_report(), "csv", "advice"))))
    assert [(r["kind"], r["saving_per_month"]) for r in found] == [
        ("quota", "2044.00"),
        ("idle", "1022.00"),
        ("mig", "876.00"),
    ]
    assert found[2]["framebuffer_max_mib"] == "7500" and found[2]["activity_max_percent"] == "2.0"
    assert {r["currency"] for r in found} == {"EUR"}
    (withheld,) = csv.DictReader(io.StringIO(format_report(_report(), "csv", "advice_withheld")))
    # A workload name is a name: it never becomes a spreadsheet formula.
    assert withheld["workload"] == "'=cmd|calc/vllm-llama"
    assert withheld["reason"] == "thin_history"


def test_json_carries_evidence_and_surety() -> None:
    data = json.loads(format_report(_report(), "json"))["advice"]
    assert data["window_days"] == 7.0
    mig = next(a for a in data["advice"] if a["kind"] == "mig")
    assert mig["action"] == "fits 1g.10gb"
    assert mig["saving_per_month"] == 876.0
    assert mig["framebuffer_mib"] == {"p50": 7000, "p95": 7300, "max": 7500, "samples": FULL}
    assert mig["coverage"] == pytest.approx(1.0, abs=1e-3)
    quota = next(a for a in data["advice"] if a["kind"] == "quota")
    assert quota["gpus_in_use"]["max"] == 1.4
    assert data["withheld"][0]["reason"] == "thin_history"


def test_a_report_without_advice_says_nothing_of_it() -> None:
    report = replace(_report(), advice=None)
    assert "Right-sizing advice" not in format_report(report, "table")
    assert "advice" not in json.loads(format_report(report, "json"))

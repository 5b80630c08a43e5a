"""The report's backlog table and one team's report, in every format, worked by hand."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from exporter.calendar import Month
from exporter.config.schema import Config
from exporter.finance.report.backlog import printed_backlog
from exporter.finance.report.figures import Report, build_report, model_rows
from exporter.finance.report.formats import format_report
from exporter.finance.report.operations import team_report, with_operations
from exporter.ledger.attribution import IDLE, UNALLOCATED, Placement
from exporter.ledger.costs.backlog import Entry, backlog
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.llm import TeamModelUsage
from exporter.ledger.result import Chargeback, LlmFigures
from exporter.ledger.units.economics import UnitEconomics
from exporter.sources.reading import Reading

CONFIG = Config.model_validate({"timezone": "UTC", "currency": "EUR"})
KEYS = ("label:team", "namespace_label:team")
NONE = Placement(UNALLOCATED, "none")


def _chargeback() -> Chargeback:
    ledger = Ledger()
    for (team, component), amount in {
        ("research", "gpu"): 500.0,
        ("research", "idle_share"): 20.0,
        ("vision", "gpu"): 300.0,
        (UNALLOCATED, "cpu"): 112.345,
    }.items():
        ledger.add(team, component, amount)
    third = 100.0 / 3
    entries = [
        Entry("batch", "job:nightly", NONE, third),
        Entry("sandbox", "deployment:notebook", NONE, third),
        Entry("tools", "deployment:grafana", NONE, third),
        Entry("default", "cronjob:etl", Placement("research", "fallback", "part_of"), 12.345),
    ]
    usage = {
        ("research", "gpt-4o"): TeamModelUsage(4.0, 1000, 500, 3),
        ("vision", "gpt-4o"): TeamModelUsage(6.0, 2000, 100, 2),
    }
    return Chargeback(
        reading=Reading.closed_month(Month.parse("2026-10", ZoneInfo("UTC"))),
        budgets={},
        units=UnitEconomics(),
        month=ledger,
        llm=LlmFigures(usage=usage, budgets=()),
        backlog=backlog(entries, KEYS),
        gpu_hours={"research": 372.0},
    )


def _report(chargeback: Chargeback) -> Report:
    assert chargeback.month is not None
    kinds = {"gpt-4o": "external"}
    report = build_report(
        chargeback.month,
        "EUR",
        "2026-10",
        {},
        model_rows(chargeback.llm_usage, (), kinds),
        idle=20.0,
        closed=True,
    )
    return with_operations(report, chargeback)


def test_each_list_is_rounded_to_add_up_to_its_own_total() -> None:
    chargeback = _chargeback()
    assert chargeback.backlog is not None
    table = printed_backlog(chargeback.backlog)
    # Three thirds of 100.00: 33.33 each leaves a cent over, and the first row carries it.
    assert [r.cost for r in table.unallocated] == [
        Decimal("33.34"),
        Decimal("33.33"),
        Decimal("33.33"),
    ]
    assert table.unallocated_total == Decimal("100.00")
    # 12.345 rounds once, half up, to 12.35.
    assert [r.cost for r in table.fallback] == [Decimal("12.35")]
    assert table.keys == KEYS


def test_csv_backlog_table() -> None:
    report = _report(_chargeback())
    rows = list(csv.reader(io.StringIO(format_report(report, "csv", "backlog"))))
    assert rows == [
        ["kind", "namespace", "workload", "team", "keys", "cost", "currency"],
        [
            "unallocated",
            "batch",
            "job:nightly",
            UNALLOCATED,
            "label:team namespace_label:team",
            "33.34",
            "EUR",
        ],
        [
            "unallocated",
            "sandbox",
            "deployment:notebook",
            UNALLOCATED,
            "label:team namespace_label:team",
            "33.33",
            "EUR",
        ],
        [
            "unallocated",
            "tools",
            "deployment:grafana",
            UNALLOCATED,
            "label:team namespace_label:team",
            "33.33",
            "EUR",
        ],
        ["unallocated", "total", "", "", "", "100.00", "EUR"],
        ["fallback", "default", "cronjob:etl", "research", "part_of", "12.35", "EUR"],
        ["fallback", "total", "", "", "", "12.35", "EUR"],
    ]


def test_json_and_table_carry_the_backlog_and_the_team_columns() -> None:
    report = _report(_chargeback())
    data = json.loads(format_report(report, "json"))
    assert data["backlog"]["unallocated_total"] == 100.0
    assert data["backlog"]["fallback"][0]["team"] == "research"
    research = next(t for t in data["teams"] if t["team"] == "research")
    # 372 GPU-hours, no quota: no occupancy; 1000 + 500 tokens.
    assert (research["gpu_hours"], research["occupancy_percent"], research["tokens"]) == (
        372.0,
        None,
        1500,
    )
    text = format_report(report, "table")
    assert "Keys that would place an unallocated workload: label:team, namespace_label:team" in text
    # People's words in the text table; the identifiers stay in CSV and JSON.
    assert "GPU-hours" in text.splitlines()[3] and "gpu_hours" not in text


def test_one_teams_report_in_every_format() -> None:
    chargeback = _chargeback()
    report = _report(chargeback)
    mine = team_report(report, chargeback, CONFIG, "research")
    assert [r.team for r in mine.rows] == ["research"]
    # Its own total and its own share of idle, not the cluster's.
    assert (mine.total, mine.idle) == (Decimal("520.00"), Decimal("20.00"))
    # Its own models: 4.00 of gpt-4o, not vision's 6.00.
    assert [(m.model, m.spend) for m in mine.models] == [("gpt-4o", Decimal("4.00"))]
    # Its part of the backlog: the fallback row placed on it, not the unallocated list.
    assert mine.backlog is not None
    assert (mine.backlog.unallocated, len(mine.backlog.fallback)) == ((), 1)
    data = json.loads(format_report(mine, "json"))
    assert (data["team"], data["total"], data["models_spend"]) == ("research", 520.0, 4.0)
    assert format_report(mine, "table").startswith(
        "Chargeback 2026-10, closed month, team research, in EUR\n"
    )
    rows = list(csv.DictReader(io.StringIO(format_report(mine, "csv"))))
    assert [(r["team"], r["total"], r["gpu_hours"]) for r in rows] == [
        ("research", "520.00", "372.00"),
        ("total", "520.00", "372.00"),
    ]
    unallocated = team_report(report, chargeback, CONFIG, UNALLOCATED)
    assert unallocated.backlog is not None
    assert len(unallocated.backlog.unallocated) == 3
    with pytest.raises(ValueError, match="no team 'nobody'"):
        team_report(report, chargeback, CONFIG, "nobody")
    assert IDLE in [r.team for r in report.rows]

"""The statement's advice section: its figures in the page's formats, escaped, per team."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from babel import Locale

from exporter.config.advice import AdviceConfig
from exporter.finance.report.figures import build_report
from exporter.finance.report.numbers import Numbers
from exporter.finance.statement.advice import advice_html, advice_rows
from exporter.finance.statement.figures import Statement, for_team
from exporter.ledger.advice import AdviceSet, Prices, advise
from exporter.ledger.costs.ledger import Ledger
from exporter.sources.dcgm_history.records import DeviceHistory, History, Spread

NUMBERS = Numbers(Locale.parse("es_ES"), "EUR")
EVIL = "<script>alert(1)</script>"
FULL = 2016


def _advice() -> AdviceSet:
    vllm = DeviceHistory(
        "ns-search", "vllm-llama", "vllm", "n1", "3", "GPU-3", "NVIDIA H100 80GB HBM3", "", (),
        Spread(7_000, 7_300, 7_500, FULL), Spread(0.02, 0.02, 0.02, FULL), 0.0,
    )  # fmt: skip
    evil = replace(vllm, namespace=EVIL, framebuffer=Spread(1, 1, 1, 12))
    return advise(
        History(7 * 86_400.0, 300.0, (vllm, evil)),
        AdviceConfig(),
        team_of=lambda d: "search" if d.namespace == "ns-search" else "vision",
        queue_team=lambda q: q,
        prices=Prices(lambda m: 1.40, lambda f: None),
        charges_quota=False,
    )


def _statement() -> Statement:
    ledger = Ledger({("search", "gpu"): 1000.0, ("vision", "gpu"): 500.0})
    report = replace(build_report(ledger, "EUR", "2026-03", {}), advice=_advice())
    return Statement(report, datetime(2026, 3, 10, tzinfo=UTC), "UTC", (), (), (), (), {})


def test_the_advice_table_prints_saving_and_evidence_in_the_page_locale() -> None:
    (head, row) = advice_rows(_advice(), NUMBERS)
    assert head[:4] == ["Team", "Workload", "Advice", "Saves a month"]
    assert row[:4] == ["search", "ns-search/vllm-llama", "fits 1g.10gb", "876,00"]
    assert row[4:] == ["7.500 MiB", "2,0\u00a0%", "100,0\u00a0%"]


def test_the_section_escapes_upstream_names_and_lists_the_withheld() -> None:
    page = "".join(advice_html(_statement(), NUMBERS))
    assert "Right-sizing advice over the last 7 days (EUR a month)" in page
    assert EVIL not in page
    assert "&lt;script&gt;" in page
    assert "No advice: history too thin or bad" in page


def test_a_teams_statement_has_its_own_advice_only() -> None:
    mine = for_team(_statement(), "vision")
    assert mine.report.advice is not None
    assert mine.report.advice.advice == ()
    assert [w.team for w in mine.report.advice.withheld] == ["vision"]
    page = "".join(advice_html(mine, NUMBERS))
    assert "fits 1g.10gb" not in page


def test_no_section_without_advice() -> None:
    statement = _statement()
    bare = replace(statement, report=replace(statement.report, advice=None))
    assert advice_html(bare, NUMBERS) == []

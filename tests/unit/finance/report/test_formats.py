"""The report's formats: CSV writes one table, JSON keeps counts as integers and money foots."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from decimal import Decimal

from exporter.finance.report.backlog import BacklogLine, BacklogTable
from exporter.finance.report.cells import FORMULA_STARTS
from exporter.finance.report.figures import Report, build_report, model_rows
from exporter.finance.report.formats import format_report
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.llm import TeamModelUsage
from tests.support.formulas import FORMULA_NAMES


def _ledger(costs: dict[tuple[str, str], float]) -> Ledger:
    ledger = Ledger()
    for (team, component), amount in costs.items():
        ledger.add(team, component, amount)
    return ledger


def _report_with_models() -> Report:
    usage = {
        ("research", "gpt-4o"): TeamModelUsage(1.005, 1000, 250, 7),
        ("vision", "gpt-4o"): TeamModelUsage(1.005, 3000, 50, 3),
        ("vision", "llama-3-70b"): TeamModelUsage(None, 900, 100, 2),
    }
    models = model_rows(usage, (), {"gpt-4o": "external"})
    ledger = _ledger({("research", "llm_external"): 1.005, ("vision", "llm_external"): 1.005})
    return build_report(ledger, "EUR", "2026-10", {}, models)


def test_csv_writes_one_table() -> None:
    report = _report_with_models()
    teams = format_report(report, "csv")
    assert "model" not in teams
    rows = list(csv.reader(io.StringIO(teams)))
    assert {len(r) for r in rows} == {len(rows[0])}
    models = list(csv.DictReader(io.StringIO(format_report(report, "csv", "models"))))
    assert [m["model"] for m in models] == ["gpt-4o", "llama-3-70b", "total"]
    # 1.005 + 1.005 = 2.01: the model's spend is summed before it is rounded.
    assert models[0]["spend"] == models[2]["spend"] == "2.01"
    assert (models[2]["prompt_tokens"], models[2]["requests"]) == ("4900", "12")


def test_json_counts_are_integers_and_money_foots() -> None:
    data = json.loads(format_report(_report_with_models(), "json"))
    gpt = data["models"][0]
    assert gpt["prompt_tokens"] == 4000 and isinstance(gpt["prompt_tokens"], int)
    assert isinstance(gpt["completion_tokens"], int) and isinstance(gpt["requests"], int)
    assert gpt["spend"] == data["models_spend"] == 2.01
    # Each team's 1.005 alone rounds to 1.01 (2.02 in all); footed the teams print 1.01 + 1.00.
    assert [t["total"] for t in data["teams"][:2]] == [1.01, 1.0]
    assert data["total"] == 2.01


def _hostile_report() -> Report:
    """Every name a formula: teams from labels, models from LiteLLM, the backlog's workloads;
    each team a credit, so its amounts are negative."""
    usage = {(name, name): TeamModelUsage(-1.5, 10, 5, 1) for name in FORMULA_NAMES}
    models = model_rows(usage, (), {})
    ledger = _ledger({(name, "llm_external"): -12.5 for name in FORMULA_NAMES})
    report = build_report(
        ledger, "EUR", "2026-10", {(n, "gpu"): -3.0 for n in FORMULA_NAMES}, models
    )
    lines = tuple(
        BacklogLine(name, name, name, (name, name), Decimal("-12.50")) for name in FORMULA_NAMES
    )
    return replace(report, backlog=BacklogTable(FORMULA_NAMES, lines, lines))


def _csv_rows(table: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(format_report(_hostile_report(), "csv", table))))


def _quoted(cells: list[str]) -> set[str]:
    assert not [c for c in cells if c[:1] in FORMULA_STARTS]
    return {c for c in cells if c.startswith("'")}


def test_team_names_cannot_become_formulas() -> None:
    rows = [r for r in _csv_rows("teams") if r["team"].startswith("'")]
    assert _quoted([r["team"] for r in rows]) == {f"'{n}" for n in FORMULA_NAMES}
    # The amounts are figures, not names: a credit stays a negative number.
    assert {(r["llm_external"], r["total"], r["budget_gpu"]) for r in rows} == {
        ("-12.50", "-12.50", "-3.00")
    }


def test_model_names_cannot_become_formulas() -> None:
    rows = [r for r in _csv_rows("models") if r["model"] != "total"]
    assert _quoted([r["model"] for r in rows]) == {f"'{n}" for n in FORMULA_NAMES}
    assert {r["spend"] for r in rows} == {"-1.50"}


def test_backlog_names_cannot_become_formulas() -> None:
    rows = [r for r in _csv_rows("backlog") if r["namespace"] != "total"]
    names = [r[c] for r in rows for c in ("namespace", "workload", "team")]
    assert _quoted(names) == {f"'{n}" for n in FORMULA_NAMES}
    # Keys are joined by a space: the cell starts with the first key.
    assert _quoted([r["keys"] for r in rows]) == {f"'{n} {n}" for n in FORMULA_NAMES}
    assert {r["cost"] for r in rows} == {"-12.50"}

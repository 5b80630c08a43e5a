"""The command line: --once, the report's formats and its unallocated gate, exit statuses."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from chargeback_demo.exporter import main as demo_main
from chargeback_demo.stack import DemoStack
from exporter.cli import main
from exporter.sources.opencost.source import fetch_window
from tests.conftest import CLOCK


def _config_file(stack: DemoStack, write_config: Callable[[str], str], extra: str = "") -> str:
    return write_config(
        "currency: EUR\n"
        "timezone: Europe/Madrid\n"
        "teams:\n  - {name: research, namespaces: [ns-research]}\n"
        f'sources:\n  opencost: {{url: "{stack.urls["opencost"]}"}}\n' + extra
    )


def test_once_prints_the_exposition(
    stack: DemoStack, write_config: Callable[[str], str], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["--config.file", _config_file(stack, write_config), "--once"], CLOCK) == 0
    out = capsysbinary.readouterr().out.decode()
    assert 'chargeback_source_up{source="opencost"} 1.0' in out
    assert 'chargeback_config_info{currency="EUR",idle_policy="proportional"} 1.0' in out


def test_once_exits_non_zero_when_a_source_fails(
    stack: DemoStack, write_config: Callable[[str], str], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    stack.opencost.fault = "500"
    assert main(["--config.file", _config_file(stack, write_config), "--once"], CLOCK) == 1
    assert b'chargeback_source_up{source="opencost"} 0.0' in capsysbinary.readouterr().out


def test_report_formats_agree(
    stack: DemoStack, write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config_file(stack, write_config)
    assert main(["report", "--config.file", path, "--format", "json"], CLOCK) == 0
    data = json.loads(capsys.readouterr().out)
    teams = {row["team"]: row for row in data["teams"]}
    assert {"research", "__idle__", "__unallocated__"} <= teams.keys()
    assert sum(row["total"] for row in data["teams"]) == pytest.approx(data["total"], abs=0.05)
    assert main(["report", "--config.file", path, "--format", "csv"], CLOCK) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[-1]["team"] == "total"
    assert float(rows[-1]["total"]) == pytest.approx(data["total"], abs=0.01)
    assert main(["report", "--config.file", path], CLOCK) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[1].startswith("Unallocated: ")
    # The configured locale (Europe/Madrid and EUR: es-ES), as the statement prints it.
    share = f"{data['unallocated_share_percent']:.1f}".replace(".", ",")
    assert f"{share}\u00a0%" in table


def test_max_unallocated_gate(
    stack: DemoStack, write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Only research is declared: vision's and search's namespaces carry no mapping, but their
    # pods carry team labels, so what is unallocated is the notebook in `sandbox`.
    path = _config_file(stack, write_config)
    assert main(["report", "--config.file", path, "--format", "json"], CLOCK) == 0
    share = json.loads(capsys.readouterr().out)["unallocated_share_percent"]
    assert 0 < share < 100
    assert (
        main(["report", "--config.file", path, "--max-unallocated", str(share + 0.1)], CLOCK) == 0
    )
    capsys.readouterr()
    assert (
        main(["report", "--config.file", path, "--max-unallocated", str(share - 0.1)], CLOCK) == 1
    )
    assert "is above" in capsys.readouterr().err


def test_report_without_cost_data_fails(
    stack: DemoStack, write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    stack.opencost.fault = "500"
    assert main(["report", "--config.file", _config_file(stack, write_config)], CLOCK) == 1
    assert "no cost data" in capsys.readouterr().err


def test_demo_report_runs_without_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo_main(["report", "--format", "json"], CLOCK) == 0
    assert json.loads(capsys.readouterr().out)["currency"] == "EUR"


def test_demo_report_has_llm_columns_and_a_model_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo_main(["report", "--format", "json"], CLOCK) == 0
    data = json.loads(capsys.readouterr().out)
    components = set().union(*(row["components"] for row in data["teams"]))
    assert {"llm_external", "llm_serving"} <= components
    models = {m["model"]: m for m in data["models"]}
    assert models["gpt-4o"]["kind"] == "external"
    llama = models["llama-3-70b"]
    assert llama["kind"] == "self_hosted"
    # The demo measures Llama's weight from vLLM (12.5 ms a completion token, 0.25 ms a
    # prompt token) and applies it: output = w x input with w = 50, not the configured 3.
    (weight,) = data["llm_completion_weights"]
    assert (weight["model"], weight["basis"], weight["configured"]) == (
        "llama-3-70b",
        "measured",
        3,
    )
    assert weight["applied"] == weight["measured"] == pytest.approx(50.0)
    assert llama["recommended_output"] == pytest.approx(50 * llama["recommended_input"])
    assert llama["measured"] == pytest.approx(llama["recommended_input"])
    assert demo_main(["report"], CLOCK) == 0
    text = capsys.readouterr().out
    assert "LLM models, month to date" in text
    assert "Completion weight per self-hosted model" in text
    # Every unit-economics table is a CSV table too, the JSON's list of that name.
    assert demo_main(["report", "--format", "csv", "--table", "llm_teams"], CLOCK) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(data["unit_economics"]["llm_teams"])
    assert {r["team"] for r in rows} >= {"research", "__unallocated__"}


def test_teams_over_the_cap_are_folded_counted_and_logged(
    stack: DemoStack,
    write_config: Callable[[str], str],
    capsysbinary: pytest.CaptureFixture[bytes],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # No declared teams: research and search come from pod labels, vision has no mapping.
    path = write_config(
        "attribution: {max_teams: 1}\n"
        f'sources:\n  opencost: {{url: "{stack.urls["opencost"]}"}}\n'
    )
    with caplog.at_level("WARNING"):
        assert main(["--config.file", path, "--once"], CLOCK) == 0
    out = capsysbinary.readouterr().out.decode()
    assert "chargeback_teams_over_cap 1.0" in out
    assert 'team="__other__"' in out
    assert "1 teams over attribution.max_teams=1 folded into __other__: search" in caplog.text


def test_csv_writes_the_models_table_on_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo_main(["report", "--format", "csv", "--table", "models"], CLOCK) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {"gpt-4o", "llama-3-70b", "total"} == {r["model"] for r in rows}
    assert all("team" not in r for r in rows)


def test_month_reads_a_closed_month_from_its_start_to_the_next(
    stack: DemoStack, write_config: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    # October 2026 in Madrid is [30 Sep 22:00 UTC, 31 Oct 23:00 UTC) (summer time ends on the
    # 25th). With OpenCost alone the report's total is OpenCost's cost for that window.
    path = _config_file(stack, write_config)
    args = ["report", "--config.file", path, "--format", "json", "--month", "2026-10"]
    assert main(args, CLOCK) == 0
    closed = json.loads(capsys.readouterr().out)
    assert (closed["month"], closed["closed"]) == ("2026-10", True)
    assert "quota_basis" not in closed  # no Kueue configured
    start, end = datetime(2026, 9, 30, 22, tzinfo=UTC), datetime(2026, 10, 31, 23, tzinfo=UTC)
    with httpx.Client(base_url=stack.urls["opencost"]) as client:
        month = fetch_window(client, start, end)
        # A window an hour short (the UTC month end) costs something else: the test can tell.
        short = fetch_window(client, start, end - timedelta(hours=1))
    assert closed["total"] == round(month.total(), 2)
    assert round(short.total(), 2) != closed["total"]
    assert main(["report", "--config.file", path, "--month", "2026-11"], CLOCK) == 2
    assert "not over yet" in capsys.readouterr().err


def test_demo_backlog_and_one_teams_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo_main(["report", "--format", "csv", "--table", "backlog"], CLOCK) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["kind"], r["namespace"], r["workload"]) for r in rows] == [
        ("unallocated", "sandbox", "deployment:notebook"),
        ("unallocated", "total", ""),
        ("fallback", "default", "cronjob:batch-etl"),
        ("fallback", "total", ""),
    ]
    assert demo_main(["report", "--format", "json"], CLOCK) == 0
    data = json.loads(capsys.readouterr().out)
    # The unallocated list is the __unallocated__ row's own usage, before its idle share and
    # LLM spend.
    row = next(t for t in data["teams"] if t["team"] == "__unallocated__")
    usage = ("gpu", "cpu", "ram", "storage", "network", "other")
    own = sum(row["components"].get(c, 0.0) for c in usage)
    assert data["backlog"]["unallocated_total"] == pytest.approx(own)
    assert demo_main(["report", "--format", "json", "--team", "research"], CLOCK) == 0
    mine = json.loads(capsys.readouterr().out)
    assert [t["team"] for t in mine["teams"]] == ["research"]
    assert [r["workload"] for r in mine["backlog"]["fallback"]] == ["cronjob:batch-etl"]
    assert mine["teams"][0]["gpu_hours"] > 0
    assert demo_main(["report", "--format", "focus", "--team", "research"], CLOCK) == 2


def test_the_month_to_date_has_a_forecast_that_foots_and_a_closed_month_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert demo_main(["report", "--format", "json"], CLOCK) == 0
    data = json.loads(capsys.readouterr().out)
    found = data["forecast"]
    mids = [row["mid"] for row in found["rows"]]
    assert sum(mids) == pytest.approx(found["total"]["mid"], abs=0.005)
    assert all(row["low"] <= row["mid"] <= row["high"] for row in found["rows"])
    assert found["total"]["mid"] > data["total"]  # half a month still to come
    assert found["length_days"] == 30 and found["whole_days"] == 0 and not found["prior"]
    assert demo_main(["report", "--format", "csv", "--table", "forecast"], CLOCK) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[-1]["team"] == "total"
    assert float(rows[-1]["forecast_mid"]) == pytest.approx(found["total"]["mid"])
    assert demo_main(["report"], CLOCK) == 0
    assert "Forecast of the month's end (14,6 of 30 days elapsed" in capsys.readouterr().out
    assert demo_main(["report", "--format", "json", "--month", "2026-10"], CLOCK) == 0
    assert "forecast" not in json.loads(capsys.readouterr().out)

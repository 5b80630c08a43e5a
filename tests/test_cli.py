"""The command line: --once, the report's formats and its unallocated gate, exit statuses."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable

import pytest

from chargeback_demo.exporter import main as demo_main
from chargeback_demo.stack import DemoStack
from exporter.cli import main
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
    assert f"{data['unallocated_share_percent']:.1f} %" in table


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


def test_no_config_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([], CLOCK) == 2
    assert "--config.file" in capsys.readouterr().err


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
    assert llama["recommended_output"] == pytest.approx(3 * llama["recommended_input"])
    assert llama["measured"] == pytest.approx(llama["recommended_input"])
    assert demo_main(["report"], CLOCK) == 0
    assert "LLM models, month to date" in capsys.readouterr().out


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

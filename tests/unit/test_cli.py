"""The command line's usage errors, before any source is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from exporter.cli import main
from tests.conftest import CLOCK


def test_no_config_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([], CLOCK) == 2
    assert "--config.file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("metrics", "must start with /"),
        ("/healthz", "already serves health"),
        ("/", "already serves the landing page"),
        ("/statement", "already serves statement"),
        ("/runbook", "already serves the runbook"),
        ("/metrics?x", "no query"),
    ],
)
def test_a_telemetry_path_that_cannot_serve_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], path: str, why: str
) -> None:
    # Refused before the config is read: the file need not exist.
    assert main(["--config.file", "/nonexistent", "--web.telemetry-path", path], CLOCK) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: --web.telemetry-path: ") and why in error


def test_a_listen_address_with_a_bare_ipv6_address_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("currency: EUR\n", encoding="utf-8")
    assert main(["--config.file", str(config), "--web.listen-address", "::1:0"], CLOCK) == 2
    assert "in brackets" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--format", "focus", "--month", "2026-10"], "FOCUS is what was charged"),
        ([], "--what-if needs --month: it joins a closed month again"),
        (["--month", "2026-10", "--by", "product"], "--what-if and --by: choose one"),
    ],
)
def test_a_what_if_the_report_cannot_print_exits_2_before_reading(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: list[str], said: str
) -> None:
    config = tmp_path / "c.yaml"
    # Nothing listens at this address: a refusal must come before any source is read.
    config.write_text('sources:\n  opencost: {url: "http://127.0.0.1:9"}\n', encoding="utf-8")
    args = ["report", "--config.file", str(config), "--what-if", "idle_policy=separate", *flags]
    assert main(args) == 2
    assert said in capsys.readouterr().err

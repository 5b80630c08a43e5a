"""The command line's usage errors, before any config is read."""

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

"""The command line's usage errors, before any config is read."""

from __future__ import annotations

import pytest

from exporter.cli import main
from tests.conftest import CLOCK


def test_no_config_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([], CLOCK) == 2
    assert "--config.file" in capsys.readouterr().err

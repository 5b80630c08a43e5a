"""promtool's lint of the golden exposition (tests/golden/demo.prom)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parents[2] / "golden" / "demo.prom"


def test_promtool_check_metrics_accepts_the_golden_file() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (make test installs it)")
    result = subprocess.run(
        [promtool, "check", "metrics"],
        input=GOLDEN.read_bytes(),
        capture_output=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()

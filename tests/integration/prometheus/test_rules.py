"""promtool on the shipped rules: they load, and every case in tests/rules/*.yaml holds."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from chargeback_mixin import generate

ROOT = Path(__file__).resolve().parents[3]
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed")


@needs_promtool
def test_promtool_check_rules() -> None:
    files = [str(ROOT / generate.RULES_FILE), str(ROOT / generate.ALERTS_FILE)]
    done = subprocess.run([PROMTOOL or "", "check", "rules", *files], capture_output=True)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()


@needs_promtool
def test_promtool_test_rules() -> None:
    files = sorted(str(p) for p in (ROOT / "tests" / "rules").glob("*.yaml"))
    assert files
    # One promtool per file, all at once: each evaluates its cases on one core, and the files
    # together take about 40 CPU-seconds, so they share the machine's cores instead of queueing.
    runs = {
        f: subprocess.Popen(
            [PROMTOOL or "", "test", "rules", f], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        for f in files
    }
    failed = {f: run.communicate()[0].decode() for f, run in runs.items()}
    failed = {f: out for f, out in failed.items() if runs[f].returncode != 0}
    assert not failed, "\n".join(f"{f}:\n{out}" for f, out in failed.items())

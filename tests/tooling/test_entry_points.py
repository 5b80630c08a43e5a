"""Every command answers --help with its usage and exits 0, starting nothing."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

# The checkout, found upwards so the file may move within tests/.
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
# Every `python -m` module, with the program name its usage line starts with.
ENTRY_POINTS = {
    "exporter.cli": "gpu-chargeback-exporter",
    "chargeback_demo": "python -m chargeback_demo",
    "chargeback_demo.run": "python -m chargeback_demo.run",
    "chargeback_demo.flood": "python -m chargeback_demo.flood",
    "chargeback_mixin.generate": "python -m chargeback_mixin.generate",
    "chargeback_deploy.generate": "python -m chargeback_deploy.generate",
    "bench.run": "python -m bench.run",
    "bench.soak": "python -m bench.soak",
    "bench.child": "python -m bench.child",
    "bench.opencost_decode": "python -m bench.opencost_decode",
    "bench.litellm_decode": "python -m bench.litellm_decode",
    "bench.ab": "python -m bench.ab",
    "bench.opencost_path": "python -m bench.opencost_path",
    "bench.series": "python -m bench.series",
    "bench.focus_tags": "python -m bench.focus_tags",
    "bench.focus_month": "python -m bench.focus_month",
    "bench.focus_bill": "python -m bench.focus_bill",
    "bench.listener": "python -m bench.listener",
    "bench.rules": "python -m bench.rules",
    "bench.forecast_backtest": "python -m bench.forecast_backtest",
    "bench.advice": "python -m bench.advice",
}
PACKAGES = ("exporter", "chargeback_demo", "chargeback_mixin", "chargeback_deploy", "bench")
# Runs a module as `python -m` would, after refusing what starting anything needs: a socket
# bound or connected, a child process. Without the Grafana SDK, too: only generating the
# dashboards needs it.
GUARD = """
import os, runpy, sys

def refuse(event, args):
    if event in ("socket.bind", "socket.connect", "subprocess.Popen", "os.fork",
                 "os.posix_spawn", "os.exec", "os.system"):
        sys.__stderr__.write(f"started something: {event} {args!r}\\n")
        sys.__stderr__.flush()
        os._exit(97)

sys.addaudithook(refuse)
sys.modules["grafana_foundation_sdk"] = None
module, *args = sys.argv[1:]
sys.argv = [module, *args]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""
TIMEOUT = 60  # generous for a loaded machine; a command that serves would never return


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    # From the checkout, as the Makefile runs them: only `exporter` is installed.
    return subprocess.run(
        [sys.executable, "-c", GUARD, module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize("module", sorted(ENTRY_POINTS))
def test_help_prints_usage_and_a_description_and_exits_0(module: str) -> None:
    done = _run(module, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {ENTRY_POINTS[module]}"), done.stdout
    paragraphs = done.stdout.split("\n\n")
    assert not paragraphs[1].startswith(("options:", "positional arguments:")), "a description"


@pytest.mark.parametrize("module", sorted(set(ENTRY_POINTS) - {"chargeback_demo"}))
def test_an_unknown_flag_is_an_error_not_ignored(module: str) -> None:
    # `python -m chargeback_demo` hands every flag to the exporter, after starting the fakes.
    done = _run(module, "--no-such-flag")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{ENTRY_POINTS[module]}: error:" in done.stderr


def test_the_console_script_answers_help() -> None:
    script = Path(sys.executable).parent / "gpu-chargeback-exporter"
    done = subprocess.run(
        [str(script), "--help"], capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: gpu-chargeback-exporter")


def _runnable_modules() -> set[str]:
    found = set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            if path.name == "__main__.py":
                found.add(name.removesuffix(".__main__"))
                continue
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.If) and ast.unparse(node.test) in (
                    "__name__ == '__main__'",
                    '__name__ == "__main__"',
                ):
                    found.add(name)
    return found


def test_every_command_is_checked() -> None:
    assert _runnable_modules() == set(ENTRY_POINTS)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert set(re.findall(r"python -m ([\w.]+)", makefile)) <= set(ENTRY_POINTS)
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for target in scripts["scripts"].values():
        assert target.partition(":")[0] in ENTRY_POINTS, target

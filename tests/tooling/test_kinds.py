"""The tests' own layout: unit tests mirror the package and start no process, server or browser.

The rule for tests/unit, checked on every module there (tests, helpers and __init__):

- it imports none of the standard modules that start processes or open sockets
  (`subprocess`, `multiprocessing`, `socket`, `socketserver`, `http.server`, `urllib.request`);
- it imports nothing that starts the demo, a fake upstream on loopback, Prometheus,
  Alertmanager, the exporter's server, service or worker process, or a browser
  (`chargeback_demo.stack.DemoStack`, `chargeback_demo.httpfake.FakeServer`, the demo's
  command line, its Prometheus and fault proxy helpers, `MetricsServer`, `Lifecycle`,
  `WorkerRefresher`, the bench's upstream servers), nor the integration, e2e or Prometheus
  API helpers of the other kinds;
- no test asks for the `stack` fixture, which starts every fake upstream of the demo.

Unit tests reach HTTP through `httpx.MockTransport`, and the fakes' handlers are called
directly; pure helpers of those modules (`demo_config_dict`, `FakeRequest`) are allowed.

Every test that starts a Python process (the exporter or the demo, on the machine's clock) is
among those .ci/run runs again under faketime.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
UNIT = ROOT / "tests" / "unit"
PACKAGE = ROOT / "exporter"

STARTS_THINGS = (
    "subprocess",
    "multiprocessing",
    "socket",
    "socketserver",
    "http.server",
    "urllib.request",
    "chargeback_demo.__main__",
    "chargeback_demo.exporter",
    "chargeback_demo.faultproxy",
    "chargeback_demo.prometheus",
    "chargeback_demo.run",
    "bench.servers",
    "tests.e2e",
    "tests.integration",
    "tests.support.prometheus_api",
)
# Modules with pure helpers beside the one name that starts something.
STARTERS = {
    ("chargeback_demo.stack", "DemoStack"),
    ("chargeback_demo.httpfake", "FakeServer"),
    ("exporter.serve.server", "MetricsServer"),
    ("exporter.serve.lifecycle", "Lifecycle"),
    ("exporter.serve.worker", "WorkerRefresher"),
}


def _unit_modules() -> list[Path]:
    found = sorted(UNIT.rglob("*.py"))
    assert found
    return found


def _starts(module: str) -> bool:
    return any(module == bad or module.startswith(f"{bad}.") for bad in STARTS_THINGS)


def _violations(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(root)
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [f"{where}: import {a.name}" for a in node.names if _starts(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if _starts(node.module):
                out.append(f"{where}: from {node.module} import ...")
                continue
            out += [
                f"{where}: from {node.module} import {a.name}"
                for a in node.names
                if (node.module, a.name) in STARTERS or _starts(f"{node.module}.{a.name}")
            ]
        elif isinstance(node, ast.FunctionDef):
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            out += [f"{where}: {node.name} asks for `stack`" for a in args if a.arg == "stack"]
    return out


def test_unit_tests_start_no_process_server_or_browser() -> None:
    bad = [v for path in _unit_modules() for v in _violations(path)]
    assert not bad, "\n".join(bad)


def test_the_rule_sees_what_starts_things(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import subprocess\n"
        "from chargeback_demo.stack import DemoStack, demo_config_dict\n"
        "from chargeback_demo import exporter\n"
        "from tests.support import prometheus_api\n"
        "def test_x(stack): ...\n",
        encoding="utf-8",
    )
    found = [v.split(": ", 1)[1] for v in _violations(probe, tmp_path)]
    assert found == [
        "import subprocess",
        "from chargeback_demo.stack import DemoStack",
        "from chargeback_demo import exporter",
        "from tests.support import prometheus_api",
        "test_x asks for `stack`",
    ]


def test_every_name_the_rules_look_for_exists() -> None:
    """A rule naming a module or class that was renamed or removed would silently check nothing."""
    missing = [m for m in (*STARTS_THINGS, *PROCESS_HELPERS) if importlib.util.find_spec(m) is None]
    missing += [
        f"{module}.{name}"
        for module, name in sorted(STARTERS)
        if not hasattr(importlib.import_module(module), name)
    ]
    missing += [
        f"tests/**/{name}" for name in sorted(CLOCKLESS) if not list(ROOT.glob(f"tests/**/{name}"))
    ]
    if not hasattr(importlib.import_module("tests.conftest"), "stack"):
        missing.append("the `stack` fixture of tests/conftest.py")
    assert not missing, f"the rules name what no longer exists: {missing}"


def test_the_rule_sees_every_starter_it_names(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    imports = [f"from {module} import {name}" for module, name in sorted(STARTERS)]
    imports += [f"import {module}" for module in STARTS_THINGS]
    probe.write_text("\n".join(imports) + "\n", encoding="utf-8")
    assert [v.split(": ", 1)[1] for v in _violations(probe, tmp_path)] == imports


def test_unit_tests_are_named_after_the_module_they_test() -> None:
    """tests/unit/<folder>/test_<module>[_<aspect>].py tests exporter/<folder>/<module>.py."""
    bad = []
    for path in _unit_modules():
        if not path.name.startswith("test_"):
            continue
        folder = PACKAGE / path.parent.relative_to(UNIT)
        stem = path.stem.removeprefix("test_")
        parts = stem.split("_")
        candidates = ["_".join(parts[:n]) for n in range(len(parts), 0, -1)]
        if not any((folder / f"{c}.py").is_file() or (folder / c).is_dir() for c in candidates):
            bad.append(str(path.relative_to(ROOT)))
    assert not bad, f"no module of exporter/ matches: {bad}"


def test_every_test_folder_is_a_package() -> None:
    """`from tests.x.y import ...` works because every folder of Python files has __init__."""
    tests = ROOT / "tests"
    folders = {p.parent for p in tests.rglob("*.py")}
    assert not [str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").is_file()]


# Tests that start Python processes which never ask for the date: each entry point's --help,
# pip building the wheel, the kubeconfig exec plugin (a script that prints the expiry the test
# wrote for it; the client judging it is handed its clock), and an interpreter listing the
# modules the join imports.
CLOCKLESS = frozenset(
    {"test_entry_points.py", "test_layout.py", "test_kube_exec.py", "test_join_imports.py"}
)
# Helpers that start the exporter as a process: a test importing one starts Python too.
PROCESS_HELPERS = ("tests.integration.process",)


def _runs_python(path: Path) -> bool:
    """Whether the module starts a Python process: it reads `sys.executable`, or imports a
    helper that does."""
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(n, ast.Attribute)
            and n.attr == "executable"
            and isinstance(n.value, ast.Name)
            and n.value.id == "sys"
        ):
            return True
        if isinstance(n, ast.ImportFrom) and n.module in PROCESS_HELPERS:
            return True
    return False


def test_tests_that_start_the_exporter_on_the_machines_clock_run_under_faketime() -> None:
    """A Python process a test starts has no frozen clock to be handed: .ci/run fakes its date."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    listed = re.search(r"^CLOCK_DEPENDENT=\(([^)]*)\)", ci, flags=re.MULTILINE)
    assert listed, ".ci/run lists the tests it runs under faketime in CLOCK_DEPENDENT"
    paths = [ROOT / p for p in listed.group(1).split()]
    assert UNIT in paths
    starters = [p for p in sorted((ROOT / "tests").rglob("test_*.py")) if _runs_python(p)]
    assert starters
    missing = [
        str(p.relative_to(ROOT))
        for p in starters
        if not any(p.is_relative_to(q) for q in paths) and p.name not in CLOCKLESS
    ]
    assert not missing, f"add to CLOCK_DEPENDENT in .ci/run: {missing}"

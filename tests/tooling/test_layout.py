"""The package layout holds: the runtime imports no dev tool, and only the runtime ships.

Which folder may import which is checked by test_layers.py.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).parents[2]
DEV_ONLY = (
    "chargeback_demo",
    "chargeback_mixin",
    "chargeback_deploy",
    "grafana_foundation_sdk",
    "tests",
)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def _modules(folder: str) -> list[Path]:
    found = sorted((ROOT / folder).rglob("*.py"))
    assert found, folder
    return found


def test_the_runtime_package_imports_no_dev_tool() -> None:
    bad = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in _modules("exporter")
        for name in _imports(path)
        if name.split(".")[0] in DEV_ONLY
    }
    assert not bad


def test_the_image_copies_only_the_runtime_package() -> None:
    copies = [
        line.split()[1]
        for line in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()
        if line.startswith("COPY ")
    ]
    assert "exporter" in copies
    assert not set(copies) & {"chargeback_demo", "chargeback_mixin", "chargeback_deploy", "."}


def test_the_wheel_ships_only_the_runtime_package(tmp_path: Path) -> None:
    # Built for real, offline and without build isolation (the backend, setuptools, is a dev
    # dependency), from a copy: setuptools builds in the source tree.
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns(".*", "__pycache__", "build", "dist", "*.egg-info")
    shutil.copytree(ROOT, source, ignore=ignore)
    wheels = tmp_path / "wheels"
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index"]
    command += ["--no-build-isolation", "--wheel-dir", str(wheels), str(source)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    (wheel,) = wheels.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (info,) = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        metadata = archive.read(f"{info}/METADATA").decode()
    assert {n.split("/")[0] for n in names} - {info} == {"exporter"}
    # Every runtime module, subpackages included (a folder without __init__.py is one too).
    shipped = {n for n in names if n.endswith(".py")}
    assert shipped == {p.relative_to(ROOT).as_posix() for p in _modules("exporter")}
    assert {n for n in names if not n.endswith(".py")} - {n for n in names if info in n} == {
        "exporter/docs/runbook.md"
    }
    assert "gpu-chargeback-exporter = exporter.cli:main" in entry_points
    assert "Description-Content-Type: text/markdown" in metadata  # README.md, as the image builds


def test_the_shipped_runbook_is_docs_runbook() -> None:
    # /runbook serves the package's copy: the docs and the running exporter say the same.
    shipped = (ROOT / "exporter" / "docs" / "runbook.md").read_bytes()
    assert shipped == (ROOT / "docs" / "runbook.md").read_bytes(), (
        "cp docs/runbook.md exporter/docs/runbook.md"
    )


def test_every_module_has_a_docstring_and_future_annotations() -> None:
    for folder in ("exporter", "chargeback_demo", "chargeback_mixin", "chargeback_deploy"):
        for path in _modules(folder):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            assert ast.get_docstring(tree), path
            if path.name != "__init__.py" or tree.body[1:]:
                futures = [
                    n
                    for n in tree.body
                    if isinstance(n, ast.ImportFrom) and n.module == "__future__"
                ]
                assert futures, f"{path}: from __future__ import annotations"

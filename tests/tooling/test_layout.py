"""The package layout holds: the runtime imports no dev tool, and sources/ only does I/O."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]
DEV_ONLY = (
    "chargeback_demo",
    "chargeback_mixin",
    "chargeback_deploy",
    "grafana_foundation_sdk",
    "tests",
)
# What sources/ may not reach: the scheduler, the wiring, the joins and the renderer.
NOT_FROM_SOURCES = (
    "exporter.serve.refresher",
    "exporter.serve.wiring",
    "exporter.assemble",
    "exporter.exposition.render",
    "exporter.cli",
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


def test_sources_only_fetch_and_parse() -> None:
    bad = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in _modules("exporter/sources")
        for name in _imports(path)
        if name.startswith(NOT_FROM_SOURCES)
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

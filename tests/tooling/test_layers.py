"""The runtime's folders import one way, along the flow, and no module imports itself back.

Each stage folder says which folders it may import (an allow-list); the leaf helpers at the
top import only each other; the command line alone composes everything. One upstream's
folder never reaches into another's: they share only the helpers beside them in `sources/`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from exporter.sources.registry import SOURCES

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "exporter"
STAGES = ("config", "sources", "ledger", "exposition", "serve", "finance")
UPSTREAMS = tuple(SOURCES)  # the source table: one folder per upstream
LEAF = "leaf"  # the helpers at the top: clock, calendar, errors, logs, redact, ...
# Folder -> the folders its modules may import (its own always included).
ALLOWED: dict[str, set[str]] = {
    LEAF: set(),
    "config": {LEAF},
    "sources": {LEAF, "config"},
    # The ledger answers in money; the series are built from its result at the edge.
    "ledger": {LEAF, "config", "sources"},
    "exposition": {LEAF, "sources", "ledger"},
    "serve": {LEAF, "config", "sources", "exposition", "ledger"},
    # Finance reads the ledger's typed result, never the served samples.
    "finance": {LEAF, "config", "sources", "ledger"},
    "cli": {LEAF, *STAGES},
}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> Iterator[str]:
    """Every `exporter` module a file imports, at any depth (function-level imports too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "exporter")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "exporter":
                continue
            for alias in node.names:
                # `from exporter.sources import table` imports a module; `import X` a name.
                candidate = f"{node.module}.{alias.name}"
                yield candidate if _exists(candidate) else node.module


def _exists(module: str) -> bool:
    path = ROOT.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _folder(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return LEAF  # the package itself: its version
    if parts[1] in STAGES:
        return parts[1]
    return "cli" if parts[1] == "cli" else LEAF


def _upstream(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "sources" and parts[2] in UPSTREAMS else None


def _graph() -> dict[str, set[str]]:
    return {
        _module(path): set(_imports(path)) - {_module(path)}
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def test_every_folder_imports_only_what_its_allow_list_names() -> None:
    bad = sorted(
        f"{module} ({_folder(module)}) imports {target} ({_folder(target)})"
        for module, targets in _graph().items()
        for target in targets
        if _folder(target) != _folder(module) and _folder(target) not in ALLOWED[_folder(module)]
    )
    assert bad == []


def test_the_ledger_imports_nothing_from_exposition_serve_or_finance() -> None:
    bad = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if _folder(module) == "ledger"
        for target in targets
        if _folder(target) in ("exposition", "serve", "finance")
    )
    assert bad == []


def test_finance_reads_no_upstream_of_its_own() -> None:
    # The report reads the sources through their shared readers and the ledger's result.
    bad = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if _folder(module) == "finance"
        for target in targets
        if _upstream(target) is not None
    )
    assert bad == []


def test_an_upstream_folder_never_imports_another() -> None:
    bad = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if (mine := _upstream(module)) and (theirs := _upstream(target)) and mine != theirs
    )
    assert bad == []


def test_no_module_imports_itself_back() -> None:
    graph = _graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_the_allow_list_names_every_folder_and_the_folders_exist() -> None:
    assert set(ALLOWED) == {LEAF, "cli", *STAGES}
    for stage in STAGES:
        assert (PACKAGE / stage / "__init__.py").is_file(), stage
    for upstream in UPSTREAMS:
        assert (PACKAGE / "sources" / upstream / "__init__.py").is_file(), upstream

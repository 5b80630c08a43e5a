"""The join, its series and the report's tables load no upstream's client.

They read snapshots only: a process that joins (the report's, the bench's OpenCost path) pays
for httpx, the Kubernetes client or Prometheus's text parser only if it fetches. One fresh
interpreter imports the join's modules and lists what came in.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
# What the join, the exposition and the report's rendering are built from.
JOIN = (
    "exporter.ledger.join",
    "exporter.ledger.attribution",
    "exporter.ledger.days",
    "exporter.exposition.series",
    "exporter.exposition.render",
    "exporter.sources.table",
    "exporter.sources.opencost.body",
    "exporter.finance.report.text",
    "exporter.finance.statement.html",
    "exporter.finance.focus.export",
)
# Clients and parsers of upstream replies, and the modules of ours that build or use them.
FORBIDDEN = (
    "httpx",
    "httpcore",
    "h11",
    "kubernetes",
    "prometheus_client.parser",
    "exporter.sources.http",
    "exporter.sources.kind",
    "exporter.sources.registry",
    "exporter.sources.readers",
)
_LIST = "import importlib, json, sys\n{}\nprint(json.dumps(sorted(sys.modules)))"


def _loaded(modules: tuple[str, ...]) -> list[str]:
    code = _LIST.format("\n".join(f"importlib.import_module({m!r})" for m in modules))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def _forbidden(name: str) -> bool:
    if any(name == f or name.startswith(f"{f}.") for f in FORBIDDEN):
        return True
    parts = name.split(".")
    # A source's own module (exporter.sources.<upstream>.source) is where its client is built.
    return len(parts) == 4 and parts[:2] == ["exporter", "sources"] and parts[3] == "source"


def test_the_join_and_the_report_tables_import_no_upstream_client() -> None:
    assert [m for m in _loaded(JOIN) if _forbidden(m)] == []


def test_the_check_sees_a_client_when_one_is_imported() -> None:
    # The same check over the readers, which do fetch: it must see what they bring.
    bad = [m for m in _loaded(("exporter.sources.readers",)) if _forbidden(m)]
    assert {"httpx", "exporter.sources.opencost.source"} <= set(bad)

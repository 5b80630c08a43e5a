"""The committed dashboards/*.json, read as Grafana reads them, and every panel in them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["committed_dashboards", "every_panel"]

ROOT = Path(__file__).resolve().parents[2]


def committed_dashboards() -> dict[str, dict[str, Any]]:
    """Each committed dashboard by its file's stem."""
    return {
        p.stem: json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((ROOT / "dashboards").glob("*.json"))
    }


def every_panel(dash: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, rows and the panels a collapsed row holds included."""
    for panel in dash.get("panels", []):
        yield panel
        yield from panel.get("panels", [])

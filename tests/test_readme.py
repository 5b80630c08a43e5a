"""The README tells the truth: its metric table is the catalogue, its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from exporter.metrics import markdown_table

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_metric_table_is_the_catalogue() -> None:
    start = "<!-- metrics-table: generated from exporter/metrics.py; a test keeps it in step -->\n"
    table = README.split(start, 1)[1].split("<!-- end metrics-table -->", 1)[0]
    assert table == markdown_table(), "paste exporter.metrics.markdown_table() into the README"


def test_the_two_commands_come_first_and_exist() -> None:
    assert README.index("make demo") < README.index("## Configuration")
    assert README.index("make test") < README.index("## Configuration")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in re.findall(r"^make (\w+)", README, flags=re.MULTILINE):
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), target


def test_sections_in_the_promised_order() -> None:
    order = ["## Two commands", "## Configuration", "## Metrics", "## The report"]
    positions = [README.index(h) for h in order]
    assert positions == sorted(positions)

"""The README tells the truth: its metric table is the catalogue, its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from exporter.config.offline_check import check_config_offline
from exporter.exposition.catalogue import markdown_table

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_metric_table_is_the_catalogue() -> None:
    start = (
        "<!-- metrics-table: generated from exporter/exposition/catalogue.py;"
        " a test keeps it in step -->\n"
    )
    table = README.split(start, 1)[1].split("<!-- end metrics-table -->", 1)[0]
    assert table == markdown_table(), (
        "paste exporter.exposition.catalogue.markdown_table() into the README"
    )


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


def test_the_configuration_example_is_a_valid_config(tmp_path: Path) -> None:
    # The example a newcomer copies first: it must pass the same offline check CI runs.
    section = README.split("## Configuration", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "config.yaml"
    path.write_text(example, encoding="utf-8")
    config = check_config_offline(str(path))
    assert config.sources.dcgm is not None and config.sources.dcgm.discovery is not None
    assert config.sources.litellm is not None and config.sources.litellm.rate == 0.92

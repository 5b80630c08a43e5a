"""The README and docs/ tell the truth: the metric table is the catalogue, commands, links exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from exporter.config.offline_check import check_config_offline
from exporter.exposition.catalogue import markdown_table
from exporter.sources.registry import SOURCES

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])


SECTIONS = {name: kind.section for name, kind in SOURCES.items()}


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_metric_table_is_the_catalogue() -> None:
    start = (
        "<!-- metrics-table: generated from exporter/exposition/catalogue/;"
        " a test keeps it in step -->\n"
    )
    table = _page("metrics.md").split(start, 1)[1].split("<!-- end metrics-table -->", 1)[0]
    assert table == markdown_table(), (
        "paste exporter.exposition.catalogue.markdown_table() into docs/metrics.md"
    )


def test_the_two_commands_come_first_and_exist() -> None:
    assert README.index("make demo") < README.index("## Configuration")
    assert README.index("make test") < README.index("## Configuration")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"^make (\w+)", text, flags=re.MULTILINE):
            assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), (_name(page), target)


def test_sections_in_the_promised_order() -> None:
    order = ["## Two commands", "## Install and run", "## Configuration", "## Where to go next"]
    positions = [README.index(h) for h in order]
    assert positions == sorted(positions)


def test_the_readme_stays_short() -> None:
    # Everything past the first steps lives in docs/, one topic per page.
    assert len(README.splitlines()) < 300


def _yaml_block(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]


def test_the_minimal_config_is_a_valid_config(tmp_path: Path) -> None:
    # The example a newcomer copies first: it must pass the same offline check CI runs.
    path = tmp_path / "config.yaml"
    path.write_text(_yaml_block(README, "## Configuration"), encoding="utf-8")
    config = check_config_offline(str(path), SECTIONS)
    assert config.sources.dcgm is not None and config.sources.dcgm.discovery is not None
    assert config.sources.litellm is not None and config.sources.litellm.rate == 0.92


def test_the_full_configuration_example_is_a_valid_config(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(_yaml_block(_page("configuration.md"), "## The config file"), encoding="utf-8")
    config = check_config_offline(str(path), SECTIONS)
    assert config.sources.dcgm is not None and config.sources.dcgm.discovery is not None
    assert config.sources.litellm is not None and config.sources.litellm.rate == 0.92


# --- links and paths ------------------------------------------------------------------------

FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
# Repository paths a page names in backticks, e.g. `exporter/ledger/` or `rules/*.yml`.
REPO_PATH = re.compile(
    r"`((?:exporter|chargeback_\w+|bench|deploy|examples|rules|dashboards|docs|tests)/[^`\s]*)`"
)


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE):
        slug = _slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_points_at_a_file_and_anchor(page: Path) -> None:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    # http(s) and mailto links are not this repository's.
    targets = [t for t in LINK.findall(text) if not re.match(r"^[a-z]+:", t)]
    assert [t for t in targets if not _resolves(page, t)] == [], f"{_name(page)}: broken links"


def _resolves(page: Path, target: str) -> bool:
    file, _, anchor = target.partition("#")
    path = (page.parent / file).resolve() if file else page
    if not path.exists():
        return False
    return not anchor or path.suffix != ".md" or anchor in _anchors(path)


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_repository_path_named_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    missing = [p for p in REPO_PATH.findall(text) if not any(ROOT.glob(p.rstrip("/")))]
    assert missing == [], f"{_name(page)}: names paths that do not exist"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in LINK.findall(README)}
    orphans = [_name(p) for p in DOCS.rglob("*.md") if p.resolve() not in linked]
    assert orphans == [], "the README's 'Where to go next' misses these pages"

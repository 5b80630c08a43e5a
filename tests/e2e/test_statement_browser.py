"""The HTML statement in a real headless Chromium: no console error, no request, the figures,
and no accessibility violation axe-core finds, on every page (all teams and each team's).

`make e2e` installs axe-core from the npm registry into .axe/. Set UPDATE_SCREENSHOT=1 to
write the demo statement's screenshot to docs/statement.png.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from chargeback_demo.exporter import main as demo_main
from exporter.ledger.attribution import UNALLOCATED
from exporter.ledger.llm import TeamModelUsage
from tests.conftest import CLOCK
from tests.e2e.cdp import Browser, Page, chromium_path, headless_chromium
from tests.integration.test_statement import DEMO_NUMBERS
from tests.support.statement_dom import DOM_JS, assert_statement_matches, read_page
from tests.unit.finance.statement.test_figures import (
    EVIL_MODEL,
    EVIL_TEAM,
    _chargeback,
    _ledger,
    _statement,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS_SCREENSHOT = ROOT / "docs" / "statement.png"
AXE = ROOT / ".axe" / "node_modules" / "axe-core" / "axe.min.js"
PNG = b"\x89PNG\r\n\x1a\n"
# Every rule axe-core has for WCAG 2.0 to 2.2, A and AA, and its best practices.
AXE_RUN = """axe.run(document, {
  runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa',
                                  'best-practice']},
  resultTypes: ['violations']
}).then(r => r.violations.map(v => ({
  id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))
})))"""


def _binary() -> str:
    path = chromium_path()
    if path is not None:
        return path
    if os.environ.get("CI") or os.geteuid() == 0:
        pytest.fail("chromium is missing: `make test` and .ci/run install Debian's chromium")
    pytest.skip("chromium is not installed, and only root can install it: apt-get install chromium")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    with headless_chromium(_binary(), tmp_path_factory.mktemp("chromium-profile")) as running:
        yield running


@contextmanager
def _opened(browser: Browser, html: str, path: Path) -> Iterator[Page]:
    path.write_text(html, encoding="utf-8")
    with browser.page() as page:
        page.open(path.as_uri())
        yield page


@pytest.fixture(scope="module")
def axe_source() -> str:
    if AXE.exists():
        return AXE.read_text(encoding="utf-8")
    reason = "axe-core is not in .axe/ (`make e2e` installs it with npm)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def _violations(browser: Browser, html: str, path: Path, axe_source: str) -> list[object]:
    """What axe-core finds on the page, injected over the DevTools protocol."""
    path.write_text(html, encoding="utf-8")
    with browser.page() as page:
        page.open(path.as_uri(), bypass_csp=True)
        page.evaluate(axe_source)
        found: list[object] = page.evaluate_async(AXE_RUN)
        return found


def _assert_clean(page: Page, url: str) -> None:
    """No console error, no script error, no dialog, and no request but the file itself."""
    assert page.named("Runtime.exceptionThrown") == []
    assert page.named("Page.javascriptDialogOpening") == []
    console = page.named("Runtime.consoleAPICalled")
    assert [e for e in console if e["type"] in ("error", "assert")] == []
    logged = [e["entry"] for e in page.named("Log.entryAdded") if e["entry"]["level"] == "error"]
    assert logged == []
    requested = {e["request"]["url"] for e in page.named("Network.requestWillBeSent")}
    assert requested <= {url}


def _demo(fmt: str, *extra: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert demo_main(["report", "--format", fmt, *extra], CLOCK) == 0
    return capsys.readouterr().out


def test_demo_statement_renders_the_reports_figures(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html = _demo("html", capsys=capsys)
    report = json.loads(_demo("json", capsys=capsys))
    teams = _demo("csv", capsys=capsys)
    models = _demo("csv", "--table", "models", capsys=capsys)
    file = tmp_path / "statement.html"
    with _opened(browser, html, file) as page:
        _assert_clean(page, file.as_uri())
        figures = page.evaluate(DOM_JS)
        assert_statement_matches(figures, report, teams, models, DEMO_NUMBERS)
        # What the browser drew is what the file says.
        assert figures == read_page(html)
        shot = tmp_path / "statement.png"
        page.screenshot(shot)
    assert shot.read_bytes().startswith(PNG)
    if os.environ.get("UPDATE_SCREENSHOT"):
        shutil.copyfile(shot, DOCS_SCREENSHOT)


# Each table's full width, the room its box has, and where it ends against the page.
WIDTHS_JS = """(() => [...document.querySelectorAll('table')].map(t => ({
  caption: t.caption ? t.caption.textContent : '',
  width: t.scrollWidth,
  room: t.parentElement.clientWidth,
  right: t.getBoundingClientRect().right,
  page: document.documentElement.clientWidth,
})))()"""
SCREEN = 1400
# A4 landscape (297 mm) less the style sheet's 12 mm margins, in CSS px (96 per inch).
PRINTED = int((297 - 2 * 12) / 25.4 * 96)
# What Chromium writes for a page of A4 landscape, in points (842 x 595).
A4_LANDSCAPE = re.compile(rb"/MediaBox \[0 0 84[12](?:\.\d+)? 59[45](?:\.\d+)?\]")


def _overflowing(page: Page) -> list[object]:
    """The tables wider than their box or than the page: a column out of view or off paper."""
    tables: list[dict[str, object]] = page.evaluate(WIDTHS_JS)
    assert tables
    return [
        t
        for t in tables
        if int(t["width"]) > int(t["room"]) or float(t["right"]) > int(t["page"])  # type: ignore[call-overload, arg-type]
    ]


@pytest.mark.parametrize("month", [(), ("--month", "2026-10")], ids=["to date", "closed"])
def test_every_column_shows_on_screen_and_on_paper(
    browser: Browser, tmp_path: Path, month: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    html = _demo("html", *month, capsys=capsys)
    file = tmp_path / "statement.html"
    file.write_text(html, encoding="utf-8")
    with browser.page() as page:
        page.open(file.as_uri(), width=SCREEN)
        assert _overflowing(page) == []
        page.screenshot(tmp_path / "screen.png")
        page.print_media(PRINTED)
        assert _overflowing(page) == []
        pdf = page.pdf()
    assert pdf.startswith(b"%PDF-")
    assert A4_LANDSCAPE.search(pdf), "not printed on A4 landscape"


def test_names_from_upstreams_stay_text_in_the_browser(browser: Browser, tmp_path: Path) -> None:
    month = _ledger({(EVIL_TEAM, "gpu"): 5.0, (UNALLOCATED, "gpu"): 1.0})
    usage = {(EVIL_TEAM, EVIL_MODEL): TeamModelUsage(2.0, 1, 1, 1)}
    html = _statement(_chargeback(month=month, llm_usage=usage, budgets={}))
    file = tmp_path / "evil.html"
    with _opened(browser, html, file) as page:
        _assert_clean(page, file.as_uri())
        assert page.evaluate("document.scripts.length + document.images.length") == 0
        figures = page.evaluate(DOM_JS)
        assert figures["tables"][0][1][0] == EVIL_TEAM
        assert figures["tables"][2][1][0] == EVIL_MODEL
        assert figures["charts"]["llm"] == {EVIL_MODEL: {EVIL_TEAM: "2.00"}}
        page.screenshot(tmp_path / "evil.png")


def test_axe_finds_no_violation_on_any_statement_page(
    browser: Browser, tmp_path: Path, axe_source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    report = json.loads(_demo("json", capsys=capsys))
    pages = {
        "all teams": _demo("html", capsys=capsys),
        "closed month": _demo("html", "--month", "2026-10", capsys=capsys),
        **{t["team"]: _demo("html", "--team", t["team"], capsys=capsys) for t in report["teams"]},
    }
    assert len(pages) == 2 + len(report["teams"])
    found = {
        name: _violations(browser, page, tmp_path / f"page-{i}.html", axe_source)
        for i, (name, page) in enumerate(pages.items())
    }
    assert found == {name: [] for name in pages}
    # And axe does see what it was asked about: content outside landmarks, a scrolling table
    # the keyboard cannot reach.
    broken = (
        pages["all teams"].replace("<main>", "").replace("</main>", "").replace('tabindex="0" ', "")
    )
    seen = _violations(browser, broken, tmp_path / "broken.html", axe_source)
    assert {v["id"] for v in seen} >= {"region"}  # type: ignore[index]

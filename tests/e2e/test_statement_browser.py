"""The HTML statement in a real headless Chromium: no console error, no request, the figures.

Set UPDATE_SCREENSHOT=1 to write the demo statement's screenshot to docs/statement.png.
"""

from __future__ import annotations

import json
import os
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
from tests.support.statement_dom import DOM_JS, assert_statement_matches, read_page
from tests.unit.finance.statement.test_figures import (
    EVIL_MODEL,
    EVIL_TEAM,
    _chargeback,
    _ledger,
    _statement,
)

DOCS_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "statement.png"
PNG = b"\x89PNG\r\n\x1a\n"


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
        assert_statement_matches(figures, report, teams, models)
        # What the browser drew is what the file says.
        assert figures == read_page(html)
        shot = tmp_path / "statement.png"
        page.screenshot(shot)
    assert shot.read_bytes().startswith(PNG)
    if os.environ.get("UPDATE_SCREENSHOT"):
        shutil.copyfile(shot, DOCS_SCREENSHOT)


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
        assert figures["tables"][1][1][0] == EVIL_MODEL
        assert figures["charts"]["llm"] == {EVIL_MODEL: {EVIL_TEAM: "2.00"}}
        page.screenshot(tmp_path / "evil.png")

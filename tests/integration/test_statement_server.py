"""The /statement page: the last join's statement, the report's figures, same auth as /metrics."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import bcrypt
import httpx
import pytest

from chargeback_demo.stack import DemoStack
from exporter.cli import PAGES, main
from exporter.config.basic_auth import BasicAuth
from exporter.config.schema import load_config
from exporter.exposition.render import render
from exporter.finance.statement.page import CSP
from exporter.serve.lifecycle import Lifecycle
from exporter.serve.server import MetricsServer
from tests.conftest import CLOCK
from tests.integration.test_statement import DEMO_NUMBERS
from tests.support.statement_dom import assert_statement_matches, read_page

EXPOSITION = render([])
PAGE = b"<!DOCTYPE html><html><body>statement</body></html>"


@contextmanager
def _serving(
    statement: Callable[[], bytes | None] | None,
    auth: BasicAuth | None = None,
) -> Iterator[str]:
    server = MetricsServer(
        ("127.0.0.1", 0),
        "/metrics",
        lambda: EXPOSITION,
        auth=auth,
        pages=PAGES if statement is not None else (),
        rendered=lambda name: statement() if statement is not None else None,
    )
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


def test_503_before_the_first_join_then_the_cached_page() -> None:
    pages: list[bytes | None] = [None]
    with _serving(lambda: pages[-1]) as url:
        early = httpx.get(f"{url}/statement")
        assert early.status_code == 503
        assert "not joined" in early.text
        pages.append(PAGE)
        page = httpx.get(f"{url}/statement")
    assert page.status_code == 200
    assert page.content == PAGE
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["content-security-policy"] == CSP
    assert page.headers["x-content-type-options"] == "nosniff"


def test_landing_page_links_the_statement_only_when_served() -> None:
    with _serving(lambda: PAGE) as url:
        assert '<a href="/statement">' in httpx.get(f"{url}/").text
    with _serving(None) as url:
        assert "/statement" not in httpx.get(f"{url}/").text
        assert httpx.get(f"{url}/statement").status_code == 404


def test_statement_asks_for_the_same_credentials_as_metrics() -> None:
    auth = BasicAuth({"u": bcrypt.hashpw(b"p", bcrypt.gensalt(4)).decode()})
    with _serving(lambda: PAGE, auth) as url:
        for path in ("/metrics", "/statement"):
            denied = httpx.get(f"{url}{path}")
            assert denied.status_code == 401
            assert PAGE not in denied.content
        assert httpx.get(f"{url}/statement", auth=("u", "p")).content == PAGE


def _report(path: str, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["report", "--config.file", path, *args], CLOCK) == 0
    return capsys.readouterr().out


def test_the_service_serves_the_reports_figures(
    stack: DemoStack, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(stack.write_config())
    service = Lifecycle(load_config(path), path, CLOCK, PAGES)
    try:
        assert service.page("statement") is None
        assert service.reload()  # fetches every source once and joins
        with _serving(lambda: service.page("statement")) as url:
            page = httpx.get(f"{url}/statement", timeout=30).text
    finally:
        service.stop()
    report = json.loads(_report(path, capsys, "--format", "json"))
    teams = _report(path, capsys, "--format", "csv")
    models = _report(path, capsys, "--format", "csv", "--table", "models")
    assert_statement_matches(read_page(page), report, teams, models, DEMO_NUMBERS)

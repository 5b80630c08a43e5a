"""The served runbook: every alert's anchor is a heading id, and nothing in it runs or loads."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import yaml

from exporter.serve.http1 import Request
from exporter.serve.routes import RUNBOOK_PATH, Routes
from exporter.serve.runbook import heading_id, render_runbook, runbook_page
from tests.unit.serve.test_routes import EXPOSITION

ROOT = Path(__file__).parents[3]


class _Ids(HTMLParser):
    """Heading ids, every tag and attribute, and the page's links."""

    def __init__(self) -> None:
        super().__init__()
        self.heading_ids: set[str] = set()
        self.tags: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        found = dict(attrs)
        if re.fullmatch(r"h[1-6]", tag) and found.get("id"):
            self.heading_ids.add(str(found["id"]))
        if tag == "a" and found.get("href") is not None:
            self.hrefs.append(str(found["href"]))


def _parsed(page: bytes) -> _Ids:
    ids = _Ids()
    ids.feed(page.decode())
    return ids


def _alerts() -> list[tuple[str, str]]:
    rules = yaml.safe_load((ROOT / "rules" / "chargeback.alerts.yml").read_text(encoding="utf-8"))
    return [
        (rule["alert"], rule["annotations"]["runbook_url"])
        for group in rules["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]


def test_every_alerts_runbook_anchor_is_a_heading_id_of_the_served_page() -> None:
    ids = _parsed(runbook_page()).heading_ids
    alerts = _alerts()
    assert len(alerts) >= 20
    for name, url in alerts:
        _, _, anchor = url.partition("#")
        assert anchor == name.lower(), url
        assert anchor in ids, f"/runbook has no heading with id {anchor!r} ({name})"


def test_every_in_page_link_lands_on_a_heading() -> None:
    parsed = _parsed(runbook_page())
    local = [h[1:] for h in parsed.hrefs if h.startswith("#")]
    assert local and set(local) <= parsed.heading_ids


def test_the_shipped_markdown_is_rendered_without_its_raw_anchors() -> None:
    page = runbook_page().decode()
    assert "&lt;a id=" not in page and "<a id=" not in page
    assert "<title>Runbook: chargeback alerts</title>" in page


def test_raw_html_and_scripts_are_escaped_never_kept() -> None:
    markdown = (
        "# Title <b>\n\n<script>alert(1)</script>\n\n"
        '<img src=x onerror="alert(1)">\n\n'
        "[click](javascript:alert(1)) and [other page](report.md#x) and [web](https://example.org)\n"
    )
    parsed = _parsed(render_runbook(markdown).encode())
    assert parsed.tags.isdisjoint({"script", "img", "b", "iframe"})
    assert parsed.hrefs == ["https://example.org"]
    page = render_runbook(markdown)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert '<span title="docs/report.md#x">other page</span>' in page
    assert "<title>Title &lt;b&gt;</title>" in page


def test_heading_ids_follow_githubs_spelling() -> None:
    assert heading_id("ChargebackTeamGpusIdle") == "chargebackteamgpusidle"
    assert heading_id("Runbook: chargeback alerts") == "runbook-chargeback-alerts"
    assert heading_id(" LLM budget_80 % ") == "llm-budget_80-"


def test_routes_serve_the_runbook_with_a_policy_that_forbids_scripts() -> None:
    routes = Routes("/m", lambda: EXPOSITION)
    answer = routes.answer(Request("GET", RUNBOOK_PATH, {}))
    assert answer.status == 200 and answer.body == runbook_page()
    assert answer.content_type == "text/html; charset=utf-8"
    csp = answer.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    landing = routes.answer(Request("GET", "/", {})).body
    assert b'<a href="/runbook">' in landing

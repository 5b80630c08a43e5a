"""The alerts' runbook, shipped in the package and served as one escaped, script-free page.

docs/runbook.md is copied to exporter/docs/runbook.md (tests/tooling/test_layout.py keeps the
two equal) so the wheel and the image carry the runbook of the version they run. Each heading
gets the id an alert's `runbook_url` links to: its text lowercased, as GitHub and most docs
sites spell it.
"""

from __future__ import annotations

import functools
import html
import itertools
import re
from importlib import resources
from typing import TYPE_CHECKING

from exporter import __version__

if TYPE_CHECKING:
    from markdown_it.token import Token

__all__ = ["RUNBOOK_HEADERS", "heading_id", "render_runbook", "runbook_page"]

# No script and no request of any kind: text and inline CSS only.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
RUNBOOK_HEADERS = {
    "Content-Security-Policy": _CSP,
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}
# Empty anchors the Markdown carries for renderers that give headings no id: the headings
# here carry the same ids, and raw HTML is never passed through.
_EMPTY_ANCHOR = re.compile(r'^<a id="[^"]*"></a>[ \t]*\n', re.MULTILINE)
_NOT_IN_ID = re.compile(r"[^\w\- ]")
_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #1d2330;
  max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; line-height: 1.45; }}
code {{ font-family: "DejaVu Sans Mono", monospace; font-size: .9em; background: #f1f3f6;
  padding: 0 .2em; overflow-wrap: anywhere; }}
h2 {{ border-top: 1px solid #c9ced6; padding-top: 1rem; margin-top: 2rem; }}
a {{ color: #1f4f99; }}
.version {{ color: #4b5563; }}
</style>
</head>
<body>
<p class="version">gpu-chargeback-exporter {version}: the runbook of this version.</p>
{body}</body>
</html>
"""


def heading_id(text: str) -> str:
    """The id of a heading: lowercased, punctuation dropped, spaces as hyphens (as GitHub)."""
    return _NOT_IN_ID.sub("", text.strip().lower()).replace(" ", "-")


def render_runbook(markdown: str) -> str:
    """The HTML page of a runbook written in Markdown; raw HTML in it is escaped, never kept."""
    # Imported only when the page is first asked for: the server starts without it.
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False})
    tokens = parser.parse(_EMPTY_ANCHOR.sub("", markdown))
    title = "Runbook"
    for opening, inline in itertools.pairwise(tokens):
        if opening.type == "heading_open":
            opening.attrSet("id", heading_id(inline.content))
            if opening.tag == "h1":
                title = inline.content
        _local_links_as_text(inline.children or [])
    body = parser.renderer.render(tokens, parser.options, {})
    return _PAGE.format(csp=_CSP, title=html.escape(title), version=__version__, body=body)


def _local_links_as_text(children: list[Token]) -> None:
    """A link to another page of docs/ has no page here: keep its words, name the file."""
    local = False  # links do not nest: the last opening is the one a closing ends
    for token in children:
        if token.type == "link_open":
            href = str(token.attrGet("href") or "")
            local = not href.startswith(("#", "https://", "http://"))
            if local:
                token.tag, token.attrs = "span", {"title": f"docs/{href}"}
        elif token.type == "link_close" and local:
            token.tag, local = "span", False


@functools.cache
def runbook_page() -> bytes:
    """The shipped runbook as served at /runbook, rendered once on first ask."""
    shipped = resources.files("exporter").joinpath("docs", "runbook.md")
    return render_runbook(shipped.read_text(encoding="utf-8")).encode()

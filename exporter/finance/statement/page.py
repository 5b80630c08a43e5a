"""The statement page's template, style sheet and note paragraph (values arrive escaped)."""

from __future__ import annotations

import html

__all__ = ["CSP", "PAGE", "note"]

# No script, no request of any kind: the page is figures, inline SVG and inline CSS only.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)

STYLE = """
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #1d2330;
  margin: 2rem auto; max-width: 1100px; padding: 0 1rem; }
h1 { margin-bottom: .2rem; }
.subtitle { color: #4a5262; margin-top: 0; }
.cards { display: flex; gap: 1rem; flex-wrap: wrap; margin: 1.5rem 0; }
.card { border: 1px solid #d5d9e0; border-radius: 6px; padding: .8rem 1.2rem; min-width: 190px; }
.card p { margin: 0; }
.card .label { color: #4a5262; font-size: .85rem; text-transform: uppercase; }
.card .value { font-size: 1.7rem; font-weight: bold; margin: .2rem 0; }
.card .detail { color: #4a5262; font-size: .85rem; }
figure { margin: 1.5rem 0; }
figure svg { width: 100%; height: auto; }
.note { color: #4a5262; font-style: italic; }
table { border-collapse: collapse; margin: 1.5rem 0; font-size: .78rem; }
.table { overflow-x: auto; }
.table:focus { outline: 2px solid #1f77b4; }
caption { text-align: left; font-weight: bold; padding-bottom: .4rem; }
th, td { padding: .25rem .4rem; border-bottom: 1px solid #e3e6eb; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.total th, tr.total td { border-top: 2px solid #1d2330; font-weight: bold; }
@page { size: A4 landscape; margin: 12mm; }
@media print {
  body { margin: 0; max-width: none; padding: 0; font-size: 10pt; color: #000; }
  h1 { font-size: 16pt; }
  .cards { margin: .6rem 0; }
  .card { padding: .4rem .8rem; break-inside: avoid; }
  figure { margin: .6rem 0; break-inside: avoid; }
  figure svg { max-height: 165mm; }
  .table { overflow: visible; }
  .table:focus { outline: none; }
  table { margin: .6rem 0; font-size: 8pt; }
  caption { break-after: avoid; }
  thead { display: table-header-group; }
  tr { break-inside: avoid; }
}
"""

PAGE = (
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="$csp">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>"""
    + STYLE
    + """</style>
</head>
<body>
<header>
<h1>$title</h1>
<p class="subtitle">$subtitle</p>
</header>
<main>
<section class="cards" aria-label="Headline figures">$headline</section>
<figure id="teams">$teams</figure>
<figure id="idle">$idle</figure>
<figure id="borrowing">$borrowing</figure>
<figure id="llm">$llm</figure>
<figure id="budgets">$budgets</figure>
$notes
$tables
</main>
</body>
</html>
"""
)


def note(text: str) -> str:
    """A paragraph of the page's small print (it stands in for a chart that has nothing to draw)."""
    return f'<p class="note">{html.escape(text)}</p>'

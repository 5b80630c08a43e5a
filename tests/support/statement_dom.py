"""Read an HTML statement's figures back (charts and tables) and compare them with the report.

The same shape comes from two readers: `read_page` parses the file's text here, and `DOM_JS`
reads the page a browser rendered. Both give `{"charts": {id: {series: {x label: value}}},
"tables": [[[cell, ...], ...], ...]}`.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from decimal import Decimal
from html.parser import HTMLParser
from typing import Any

from babel.numbers import parse_decimal

from exporter.finance.report import labels
from exporter.finance.report.numbers import Numbers
from exporter.finance.statement.charts import (
    CREDITS,
    FORECAST,
    LENT,
    SPENT,
    TO_DATE,
    budget_label,
)

__all__ = ["DOM_JS", "assert_statement_matches", "read_page"]

# Series are keyed by their legend (`#activate-serie-N`), bars by their x label.
DOM_JS = """(() => {
  const charts = {};
  for (const svg of document.querySelectorAll('svg.pygal-chart')) {
    const plot = svg.querySelector('g.plot:not(.overlay):not(.text-overlay):not(.tooltip-overlay)');
    const series = {};
    plot.querySelectorAll(':scope g.series').forEach((s, i) => {
      const title = svg.querySelector('#activate-serie-' + i + ' text').textContent;
      const values = {};
      s.querySelectorAll('g.bar').forEach(b => {
        values[b.querySelector('desc.x_label').textContent] =
          b.querySelector('desc.value').textContent;
      });
      series[title] = values;
    });
    charts[svg.id.replace(/^chart-/, '')] = series;
  }
  const tables = [...document.querySelectorAll('table')].map(t =>
    [...t.querySelectorAll('tr')].map(r => [...r.children].map(c => c.textContent)));
  return {charts, tables};
})()"""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _classes(element: ET.Element) -> set[str]:
    return set((element.get("class") or "").split())


def _chart(svg: ET.Element) -> dict[str, dict[str, str]]:
    legends: dict[str, str] = {}
    for element in svg.iter():
        if (element.get("id") or "").startswith("activate-serie-"):
            text = next(t for t in element.iter() if _local(t.tag) == "text")
            legends[element.get("id", "").removeprefix("activate-serie-")] = text.text or ""
    plot = next(e for e in svg.iter() if _classes(e) == {"plot"} and _local(e.tag) == "g")
    out: dict[str, dict[str, str]] = {}
    series = [e for e in plot.iter() if "series" in _classes(e)]
    for i, serie in enumerate(series):
        values = {}
        for bar in (e for e in serie.iter() if _classes(e) == {"bar"}):
            desc = {
                next(iter(_classes(d)), ""): d.text or "" for d in bar if _local(d.tag) == "desc"
            }
            values[desc["x_label"]] = desc["value"]
        out[legends[str(i)]] = values
    return out


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def read_page(page: str) -> dict[str, Any]:
    """The figures of a statement's HTML text (pygal's SVG is XML: parse each chart as such)."""
    charts = {}
    for text in re.findall(r"<svg\b.*?</svg>", page, re.S):
        svg = ET.fromstring(text)
        charts[(svg.get("id") or "").removeprefix("chart-")] = _chart(svg)
    parser = _Tables()
    parser.feed(page)
    return {"charts": charts, "tables": parser.tables}


def _nonzero(series: dict[str, dict[str, str]], numbers: Numbers) -> dict[str, dict[str, str]]:
    """A chart without its empty bars (pygal writes a value for a bar it does not draw)."""
    out = {}
    for name, values in series.items():
        kept = {x: v for x, v in values.items() if _number(v, numbers) != 0}
        if kept:
            out[name] = kept
    return out


def _number(text: str, numbers: Numbers) -> Decimal:
    return Decimal(str(parse_decimal(text, locale=numbers.locale, strict=True)))


def _expected_charts(
    report: dict[str, Any], numbers: Numbers
) -> dict[str, dict[str, dict[str, str]]]:
    """What the teams and borrowing charts must show, from the JSON report alone."""
    teams = report["teams"]
    amount = numbers.amount
    stacked: dict[str, dict[str, str]] = {
        labels.component(c): {
            labels.team(t["team"]): amount(t["components"][c])
            for t in teams
            if t["components"][c] > 0
        }
        for c in report["components"]
    }
    credits = {
        labels.team(t["team"]): amount(sum(v for v in t["components"].values() if v < 0))
        for t in teams
        if any(v < 0 for v in t["components"].values())
    }
    stacked[CREDITS] = credits
    charts = {"teams": {k: v for k, v in stacked.items() if v}}
    borrowing = {
        t["team"]: t
        for t in teams
        if t["components"].get("borrowed") or t["components"].get("lent")
    }
    if borrowing:
        charts["borrowing"] = {
            name: {
                labels.team(n): amount(t["components"].get(k, 0.0)) for n, t in borrowing.items()
            }
            for k, name in (("borrowed", labels.component("borrowed")), ("lent", LENT))
        }
    return charts


def _check_idle(chart: dict[str, dict[str, str]], report: dict[str, Any], numbers: Numbers) -> None:
    (parts,) = chart.values()
    total = sum((_number(v, numbers) for v in parts.values()), Decimal(0))
    assert total == Decimal(str(report["idle"]["total"])).quantize(Decimal("0.01"))
    for team in report["teams"]:
        share = team["components"].get("idle_share", 0.0)
        if share:
            assert parts[labels.team(team["team"])] == numbers.amount(share)


def _check_budgets(
    chart: dict[str, dict[str, str]], report: dict[str, Any], numbers: Numbers
) -> None:
    actual_series = SPENT if report["closed"] else TO_DATE
    assert (FORECAST in chart) is not report["closed"]
    for team in report["teams"]:
        llm = team["components"].get("llm_external", 0.0)
        actual = {"gpu": team["total"] - llm, "llm": llm}
        for kind in ("gpu", "llm"):
            budget = team[f"budget_{kind}"]
            label = budget_label(team["team"], kind)
            if budget is None:
                assert label not in chart["Budget"]
                continue
            assert chart["Budget"][label] == numbers.amount(budget)
            assert chart[actual_series][label] == numbers.amount(actual[kind])


def _check_llm(chart: dict[str, dict[str, str]], report: dict[str, Any], numbers: Numbers) -> None:
    spend = {m["model"]: m["spend"] for m in report["models"]}
    assert set(chart) == set(spend)
    for model, per_team in chart.items():
        total = sum((_number(v, numbers) for v in per_team.values()), Decimal(0))
        assert total == Decimal(str(spend[model])).quantize(Decimal("0.01")), model


def assert_statement_matches(
    figures: dict[str, Any],
    report: dict[str, Any],
    teams_csv: str,
    models_csv: str,
    numbers: Numbers,
) -> None:
    """The page's charts and tables show the JSON and CSV reports' figures, to the cent, in
    the statement's locale and with its labels."""
    charts = figures["charts"]
    for chart_id, expected in _expected_charts(report, numbers).items():
        assert _nonzero(charts[chart_id], numbers) == _nonzero(expected, numbers), chart_id
    _check_idle(charts["idle"], report, numbers)
    _check_budgets(charts["budgets"], report, numbers)
    if report["models"]:
        _check_llm(charts["llm"], report, numbers)
    # The page splits the report's team table in two (costs, then budgets and use), each with
    # the team first: side by side they are the CSV's columns.
    costs, operating, *rest = figures["tables"]
    teams = [[*c, *o[1:]] for c, o in zip(costs, operating, strict=True)]
    for table, text in zip([teams, *rest], (teams_csv, models_csv), strict=False):
        header, *rows = list(csv.reader(io.StringIO(text)))
        assert len(table[0]) == len(header) - 1  # the CSV's last column is the currency
        for shown, row in zip(table[1:], rows, strict=True):
            first = row[0] if row[0] != "total" else "Total"
            assert shown[0] in (labels.team(first), first)
            for cell, raw in zip(shown[1:], row[1:-1], strict=True):
                if not (_numeric(raw) and cell):
                    continue
                if "e" in raw.lower():
                    # A cost per token, to four digits in the CSV: per million tokens here.
                    per_million = Decimal(raw) * 1_000_000
                    assert abs(_number(cell, numbers) - per_million) <= per_million / 1000, cell
                else:
                    assert _number(cell, numbers) == Decimal(raw), (cell, raw)


def _numeric(raw: str) -> bool:
    try:
        Decimal(raw)
    except ArithmeticError:
        return False
    return True

"""The statement's five charts as inline SVG drawn by pygal, with no script and no date.

pygal draws the charts in Python as SVG, so the page needs no JavaScript and no network when
it is viewed; its chart script and its generator comment (which carries the day it ran) are
stripped, so the same figures always give the same bytes. Names from upstreams (teams, models)
are escaped by the XML serializer inside the charts.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import pygal
from pygal.style import Style

from exporter.finance.report import labels
from exporter.finance.report.numbers import Numbers
from exporter.finance.statement.figures import ABSORBED, Statement
from exporter.finance.statement.page import note
from exporter.finance.statement.plotting import axis_ticks, fitting_labels
from exporter.ledger.attribution import IDLE
from exporter.ledger.costs.components import Component

__all__ = [
    "CHARTS",
    "CREDITS",
    "FORECAST",
    "LENT",
    "SPENT",
    "TO_DATE",
    "budget_label",
    "charts_svg",
]

# pygal appends to sys.meta_path a finder for its map plug-ins (unused here) that has only the
# old `find_module` API: on Python 3.11 every import that reaches it raises an ImportWarning
# (an error under the tests' filterwarnings). Nothing here needs it (Kozea/pygal#532 is the
# upstream fix, not released).
sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, pygal.PluginImportFixer)]

# The charts' ids on the page (each SVG is `svg#chart-<id>`), in page order.
CHARTS = ("teams", "idle", "borrowing", "llm", "budgets")
# Series names the tests read back.
CREDITS = "Credits"
LENT = "Quota lent (credit)"
SPENT = "Spent"
TO_DATE = "Month to date"
FORECAST = "Forecast at month end"

_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#d62728",
    "#637939",
)
# Credits (quota lent, a serving team's cost moved onto the senders) are drawn apart, in green
# below zero, never as one more stacked component.
_CREDIT = "#2ca02c"
_VALUE_FONT = 10


def _style(colors: Sequence[str]) -> Style:
    return Style(
        font_family="DejaVu Sans, Liberation Sans, Arial, sans-serif",
        background="#ffffff",
        plot_background="#ffffff",
        colors=tuple(colors) or _PALETTE,
        title_font_size=15,
        legend_font_size=12,
        label_font_size=11,
        major_label_font_size=11,
        value_font_size=_VALUE_FONT,
        value_colors=("#1d2330",),
    )


def _chart(
    kind: Callable[..., Any],
    chart_id: str,
    title: str,
    numbers: Numbers,
    colors: Sequence[str] = _PALETTE,
    span: tuple[float, float] = (0.0, 0.0),
    **options: Any,
) -> Any:
    # The value axis runs from a round tick below the deepest credit to one above the tallest bar.
    ticks = axis_ticks(*span)
    chart = kind(
        title=title,
        style=_style(colors),
        js=[],
        disable_xml_declaration=True,
        width=960,
        height=440,
        truncate_label=-1,
        truncate_legend=-1,
        legend_at_bottom=True,
        # Each bar says its figure: the page has no script, so no tooltip would.
        print_values=True,
        print_zeroes=False,
        value_formatter=numbers.amount,
        range=(ticks[0], ticks[-1]),
        y_labels=ticks,
        **options,
    )
    # The id prefixes the chart's CSS; a fixed one keeps the page reproducible.
    chart.uuid = chart_id
    chart.xml_filters.append(_without_scripts)
    chart.xml_filters.append(fitting_labels(_VALUE_FONT))
    return chart


def _without_scripts(root: Any) -> Any:
    """Drop pygal's config script (its tooltips need a script from the web) and comments."""
    for parent in list(root.iter()):
        for child in list(parent):
            tag = child.tag
            if not isinstance(tag, str) or tag.rsplit("}", 1)[-1] == "script":
                parent.remove(child)
    return root


def _svg(chart: Any) -> str:
    return str(chart.render(is_unicode=True))


def _or_none(value: Decimal) -> float | None:
    # An empty cell draws no bar (and no "0,00" label).
    return float(value) if value else None


def _teams(statement: Statement, numbers: Numbers) -> str:
    report = statement.report
    title = f"Cost per team by component ({numbers.symbol})"
    # A team with nothing to draw (`__idle__` under `proportional`) is no bar at all.
    rows = [r for r in report.rows if any(r.costs.values())]
    if not rows:
        return note("No cost this month.")
    components = [c for c in report.components if any(r.costs[c] > 0 for r in rows)]
    credits = [sum((v for v in r.costs.values() if v < 0), Decimal(0)) for r in rows]
    tops = [sum((v for v in r.costs.values() if v > 0), Decimal(0)) for r in rows]
    colors = [*_PALETTE[: len(components)], _CREDIT]
    span = (float(min(credits)), float(max(tops)))
    chart = _chart(pygal.StackedBar, "teams", title, numbers, colors, span)
    chart.x_labels = [labels.team(row.team) for row in rows]
    for component in components:
        chart.add(
            labels.component(component),
            [_or_none(max(row.costs[component], Decimal(0))) for row in rows],
        )
    if any(credits):
        chart.add(CREDITS, [_or_none(c) for c in credits])
    return _svg(chart)


def _idle(statement: Statement, numbers: Numbers) -> str:
    parts = [(name, amount) for name, amount in statement.idle if amount]
    if not parts:
        if statement.team is not None:
            return note("No idle capacity was charged to this team.")
        return note("No idle capacity this month.")
    title = f"Idle capacity, {numbers.money(statement.report.idle)}: where it went"
    span = (float(min(a for _, a in parts)), float(max(a for _, a in parts)))
    chart = _chart(pygal.HorizontalBar, "idle", title, numbers, _PALETTE, span)
    chart.x_labels = [_idle_label(name) for name, _ in parts]
    chart.add("Idle capacity", [float(amount) for _, amount in parts])
    return _svg(chart)


def _idle_label(name: str) -> str:
    if name == ABSORBED:
        return "Absorbed by reservations"
    return "Left idle" if name == IDLE else labels.team(name)


def _borrowing(statement: Statement, numbers: Numbers) -> str:
    if not statement.borrowing:
        return note("No quota was borrowed or lent this month.")
    title = f"Quota borrowed and lent ({numbers.symbol})"
    values = [v for _, b, lent in statement.borrowing for v in (b, lent)]
    span = (float(min(values)), float(max(values)))
    chart = _chart(pygal.Bar, "borrowing", title, numbers, (_PALETTE[0], _CREDIT), span)
    chart.x_labels = [labels.team(team) for team, _, _ in statement.borrowing]
    # A series with no bar (nothing lent) is left out, legend and all.
    series = (
        (labels.component(Component.BORROWED), [b for _, b, _ in statement.borrowing]),
        (LENT, [lent for _, _, lent in statement.borrowing]),
    )
    for name, amounts in series:
        if any(amounts):
            chart.add(name, [_or_none(a) for a in amounts])
    return _svg(chart)


def _llm(statement: Statement, numbers: Numbers) -> str:
    spend = {model: v for model, v in statement.llm_spend.items() if any(v)}
    if not spend:
        return note("No LLM spend this month.")
    title = f"LLM spend per team and model ({numbers.symbol})"
    tops = [sum(v, Decimal(0)) for v in zip(*spend.values(), strict=True)]
    span = (0.0, float(max(tops)))
    chart = _chart(pygal.StackedBar, "llm", title, numbers, _PALETTE, span)
    chart.x_labels = [labels.team(t) for t in statement.llm_teams]
    for model, amounts in spend.items():
        chart.add(model, [_or_none(v) for v in amounts])
    return _svg(chart)


def _budgets(statement: Statement, numbers: Numbers) -> str:
    if not statement.budgets:
        return note("No budgets are configured.")
    closed = statement.report.closed
    title = f"Budgets against {'spend' if closed else 'month to date'} ({numbers.symbol})"
    lines = statement.budgets
    values = [v for line in lines for v in (line.budget, line.actual, line.forecast)]
    span = (float(min(values)), float(max(values)))
    chart = _chart(pygal.Bar, "budgets", title, numbers, _PALETTE, span)
    chart.x_labels = [budget_label(line.team, line.kind) for line in lines]
    chart.add("Budget", [float(line.budget) for line in lines])
    # A closed month's forecast is what it spent: one bar, not two equal ones.
    chart.add(SPENT if closed else TO_DATE, [float(line.actual) for line in lines])
    if not closed:
        chart.add(FORECAST, [float(line.forecast) for line in lines])
    return _svg(chart)


def budget_label(team: str, kind: str) -> str:
    """A budget's bar: the team and the kind, `research (GPU)`."""
    return f"{labels.team(team)} ({labels.kind(kind)})"


def charts_svg(statement: Statement, numbers: Numbers) -> dict[str, str]:
    """Each chart's SVG (or the note standing in for it) by its id in CHARTS, in page order."""
    return {
        "teams": _teams(statement, numbers),
        "idle": _idle(statement, numbers),
        "borrowing": _borrowing(statement, numbers),
        "llm": _llm(statement, numbers),
        "budgets": _budgets(statement, numbers),
    }

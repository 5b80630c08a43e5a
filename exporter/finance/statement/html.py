"""The statement as one self-contained HTML page: headline cards, notes, charts and tables.

The charts are inline SVG (statement.charts), the tables plain HTML (statement.tables); the
page needs no script and no network. Every name that came from an upstream (teams, models) is
escaped: by the XML serializer inside the charts, by `html.escape` everywhere else. The page
forbids scripts outright (Content-Security-Policy).
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from decimal import Decimal
from string import Template

from exporter.finance.report import labels
from exporter.finance.report.figures import QUOTA_BASIS
from exporter.finance.report.numbers import Numbers
from exporter.finance.statement.charts import charts_svg
from exporter.finance.statement.figures import Statement
from exporter.finance.statement.operations import usage_cards
from exporter.finance.statement.page import CSP, PAGE, note
from exporter.finance.statement.tables import tables_html
from exporter.ledger.costs.components import Component

__all__ = ["statement_html"]


def _headline(statement: Statement, numbers: Numbers) -> str:
    report = statement.report

    def card(label: str, value: str, detail: str) -> str:
        return (
            f'<div class="card"><p class="label">{html.escape(label)}</p>'
            f'<p class="value">{html.escape(value)}</p>'
            f'<p class="detail">{html.escape(detail)}</p></div>'
        )

    if statement.team is not None:
        (row,) = report.rows
        cards = [card("Total", numbers.money(row.total), "every component")]
        for kind, budget in (("GPU", row.budget_gpu), ("LLM", row.budget_llm)):
            if budget is not None:
                cards.append(card(f"{kind} budget", numbers.money(budget), "for the month"))
        cards += usage_cards(report.usage.get(row.team), numbers, card)
        return "".join(cards)
    cards = [
        card("Total", numbers.money(report.total), "every team, every component"),
        card(
            "Unallocated",
            numbers.percent(report.unallocated_share),
            f"{numbers.money(report.unallocated)} of {numbers.money(report.total)}",
        ),
        card(
            "Idle capacity",
            numbers.money(report.idle),
            f"{numbers.money(report.idle_shared)} shared onto teams",
        ),
    ]
    if report.models:
        # What the LLM providers billed, as the cost table's column: a self-hosted model's
        # LiteLLM price is internal, and its cost is the GPUs' (re-attributed to the senders).
        bought = report.columns.get(Component.LLM_EXTERNAL, Decimal(0))
        label = labels.component(Component.LLM_EXTERNAL)
        cards.append(card(label, numbers.money(bought), "billed by the providers"))
    return "".join(cards)


def _notes(statement: Statement) -> Iterable[str]:
    report = statement.report
    if report.quota_basis is not None:
        yield note(QUOTA_BASIS[report.quota_basis] + ".")
    if statement.budgets and not report.closed:
        yield note(
            "Forecast: month to date plus the current hourly rate for the hours left in the month."
        )
    if any(v < 0 for r in report.rows for v in r.costs.values()):
        yield note(
            "Credits (quota lent, a self-hosted model's cost moved onto the teams that sent it "
            "tokens) are drawn in green below zero."
        )


def _subtitle(statement: Statement) -> str:
    report = statement.report
    money = f"figures in {report.currency}"
    if report.closed:
        return f"Closed month, {money}, days in {statement.zone}"
    return f"Month to date, {money}, as of {statement.at:%Y-%m-%d %H:%M %Z} ({statement.zone})"


def statement_html(statement: Statement, numbers: Numbers) -> str:
    """The whole page: headline figures, the five charts, then the tables."""
    report = statement.report
    span = "closed month" if report.closed else "month to date"
    who = f"{labels.team(statement.team)}, " if statement.team else ""
    where = f" of {statement.cluster}" if statement.cluster else ""
    tables = tables_html(statement, numbers)
    return Template(PAGE).substitute(
        csp=CSP,
        title=html.escape(f"Chargeback {report.month}{where}: {who}{span}"),
        subtitle=html.escape(_subtitle(statement)),
        headline=_headline(statement, numbers),
        **charts_svg(statement, numbers),
        notes="".join(_notes(statement)),
        tables="".join(tables),
    )

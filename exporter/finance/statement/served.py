"""The statement as the server publishes it: rendered in the refresh worker after a join."""

from __future__ import annotations

from exporter.config.schema import Config
from exporter.finance.report.forecast import with_forecast_table
from exporter.finance.statement.figures import build_statement, statement_report
from exporter.finance.statement.page import CSP
from exporter.ledger.result import Chargeback

__all__ = ["STATEMENT", "STATEMENT_HEADERS", "render_statement", "statement_artefact"]

# The name the worker renders the page under.
STATEMENT = "statement"
# The statement page runs no script and loads nothing: the same policy its file carries.
STATEMENT_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}


def render_statement(chargeback: Chargeback, config: Config) -> bytes | None:
    """The HTML statement of one join's month to date; None when the join has no cost data."""
    # pygal is imported only when a page is asked for.
    from exporter.finance.report.numbers import Numbers, statement_locale
    from exporter.finance.statement.html import statement_html

    report = statement_report(chargeback, config)
    if report is None:
        return None
    numbers = Numbers(statement_locale(config), config.currency)
    # The server's join carries the forecast from its day book: the page prints that one.
    report = with_forecast_table(report, chargeback)
    return statement_html(build_statement(report, chargeback, config), numbers).encode()


def statement_artefact(config: Config, chargeback: Chargeback) -> bytes:
    """The /statement page as the refresh worker renders it after a join (b"": no cost data)."""
    return render_statement(chargeback, config) or b""

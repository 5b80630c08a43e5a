"""`report --format focus`: read a closed month day by day and write its FOCUS rows."""

from __future__ import annotations

from exporter.config.schema import Config
from exporter.finance.closed_month import ClosedMonth
from exporter.finance.focus.days import daily_ledgers
from exporter.finance.focus.rows import FocusContext, focus_rows
from exporter.finance.focus.writer import format_focus
from exporter.finance.report import Report
from exporter.serve.refresher import Source

__all__ = ["PROVIDER", "focus_export"]

# Who provides, publishes and issues an internal chargeback: the platform that runs it.
PROVIDER = "gpu-chargeback-exporter"


def focus_export(config: Config, sources: list[Source], report: Report, month: ClosedMonth) -> str:
    """The closed month's FOCUS CSV; the sources are closed afterwards."""
    try:
        days = daily_ledgers(config, sources, month)
    finally:
        for source in sources:
            source.close()
    ctx = FocusContext(
        currency=report.currency,
        month_start=month.start,
        month_end=month.end,
        provider=PROVIDER,
        billing_account=f"chargeback-{report.currency.lower()}",
        quota_basis=report.quota_basis,
    )
    return format_focus(focus_rows(report, days, ctx))

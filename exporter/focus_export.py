"""`report --format focus`: read a closed month day by day and write its FOCUS rows."""

from __future__ import annotations

from exporter.config import Config
from exporter.focus import format_focus
from exporter.focus_days import daily_ledgers
from exporter.focus_rows import FocusContext, focus_rows
from exporter.refresher import Source
from exporter.report import Report
from exporter.report_month import ClosedMonth

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

"""`report --format focus`: a closed month read by day, written as its FOCUS rows."""

from __future__ import annotations

from collections.abc import Mapping

from exporter.config.schema import Config
from exporter.finance.focus.days import daily_ledgers
from exporter.finance.focus.rows import FocusContext, focus_rows
from exporter.finance.focus.writer import format_focus
from exporter.finance.report import Report
from exporter.sources.reading import Reading

__all__ = ["PROVIDER", "focus_export"]

# Who provides, publishes and issues an internal chargeback: the platform that runs it.
PROVIDER = "gpu-chargeback-exporter"


def focus_export(
    config: Config, snapshots: Mapping[str, object], report: Report, reading: Reading
) -> str:
    """The closed month's FOCUS CSV, from the snapshots the report was built on (read by day)."""
    days = daily_ledgers(config, snapshots, reading)
    ctx = FocusContext(
        currency=report.currency,
        month_start=reading.month.start,
        month_end=reading.month.end,
        provider=PROVIDER,
        billing_account=f"chargeback-{report.currency.lower()}",
        quota_basis=report.quota_basis,
    )
    return format_focus(focus_rows(report, days, ctx))

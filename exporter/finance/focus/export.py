"""`report --format focus`: a month read by day, written as its FOCUS rows and their metadata."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from exporter.config.schema import Config
from exporter.finance.focus.days import daily_ledgers
from exporter.finance.focus.rows import FocusContext, focus_rows
from exporter.finance.focus.tags import Tagging
from exporter.finance.focus.writer import format_focus
from exporter.finance.report.figures import Report
from exporter.sources.reading import Reading

__all__ = ["FocusExport", "focus_context", "focus_export", "invoice_id"]


@dataclass(frozen=True)
class FocusExport:
    """The CSV and the name it is filed under (its metadata's name follows from it)."""

    csv: str
    name: str
    rows: int


def invoice_id(cluster: str, month: str) -> str:
    """One statement per cluster and closed month: `<cluster>-<YYYY-MM>`."""
    return f"{cluster}-{month}"


def focus_context(config: Config, report: Report, reading: Reading) -> FocusContext:
    """Who provides, publishes and invoices the month's rows, and where they ran."""
    naming = config.report
    return FocusContext(
        currency=report.currency,
        month_start=reading.month.start,
        month_end=reading.month.end,
        cluster=naming.cluster,
        provider=naming.provider,
        invoice_issuer=naming.invoice_issuer or naming.provider,
        invoice_id=invoice_id(naming.cluster, report.month) if reading.closed else None,
        publishers={m.model: m.publisher for m in config.llm_models if m.publisher},
        quota_basis=report.quota_basis,
        true_up_invoices=_true_up_invoices(report),
    )


def _true_up_invoices(report: Report) -> tuple[str, ...]:
    found = report.reconciliation
    if found is None:
        return ()
    return tuple(sorted({i for up in found.true_ups for i in up.invoices}))


def focus_export(
    config: Config,
    snapshots: Mapping[str, object],
    report: Report,
    reading: Reading,
    tags: Tagging | None = None,
) -> FocusExport:
    """The month's FOCUS CSV, from the snapshots the report was built on (read by day);
    with `tags`, every row split by the combinations of the dimensions' values (tagged)."""
    days = daily_ledgers(config, snapshots, reading)
    ctx = focus_context(config, report, reading)
    rows = focus_rows(report, days, ctx, tags)
    span = "" if reading.closed else "-to-date"
    return FocusExport(format_focus(rows), f"focus-{ctx.cluster}-{report.month}{span}", len(rows))

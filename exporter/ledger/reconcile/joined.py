"""The reconciliation of one join: the bills read against the snapshots the join was given."""

from __future__ import annotations

from datetime import date

from exporter.config.schema import Config
from exporter.ledger.reconcile.figures import Reconciliation
from exporter.ledger.reconcile.matching import reconcile
from exporter.ledger.reconcile.recorded import recorded_of
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots

__all__ = ["closes_month", "ended_days", "publishers", "reconciliation_of"]


def publishers(config: Config) -> dict[str, str]:
    """Each declared model's publisher, by the public name LiteLLM records."""
    return {m.model: m.publisher for m in config.llm_models if m.publisher}


def ended_days(reading: Reading) -> list[date]:
    """The month's days that have ended by the reading (all of them once the month closed)."""
    return [start.date() for start, end in reading.month.days() if end <= reading.until]


def closes_month(reading: Reading) -> bool:
    """Whether the reading is the whole of a closed month: the one reading that trues up."""
    return reading.closed and reading.until >= reading.month.end


def reconciliation_of(
    config: Config, latest: Snapshots, litellm: LiteLLMSnapshot | None, reading: Reading
) -> Reconciliation | None:
    """The bills against the records; None without bills. `litellm` is the gateway's snapshot
    in the exporter's currency."""
    if not config.bills.sources or not latest.bills:
        return None
    recorded = recorded_of(litellm, latest.opencost, publishers(config))
    return reconcile(
        config.bills,
        config.currency,
        latest.bills,
        recorded,
        ended_days(reading),
        closed=closes_month(reading),
    )

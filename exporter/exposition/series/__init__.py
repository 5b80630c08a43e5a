"""The chargeback as series: each catalogue area's samples, built from the typed result."""

from __future__ import annotations

from exporter.exposition.samples import Sample
from exporter.exposition.series import (
    bills,
    calendar,
    cluster,
    costs,
    dimensions,
    gpus,
    llm,
    quota,
    unit_economics,
)
from exporter.ledger.result import Chargeback

__all__ = ["series"]


def series(chargeback: Chargeback) -> list[Sample]:
    """Every series of one join, area by area (the renderer orders them by the catalogue)."""
    return [
        *costs.series(chargeback),
        *cluster.series(chargeback),
        *dimensions.series(chargeback),
        *calendar.series(chargeback),
        *gpus.series(chargeback),
        *quota.series(chargeback),
        *llm.series(chargeback),
        *unit_economics.series(chargeback),
        *bills.series(chargeback),
    ]

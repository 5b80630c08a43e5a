"""Reconciliation: what the bills say against what the gateway and OpenCost recorded (pure)."""

from __future__ import annotations

from exporter.ledger.reconcile.figures import BillFigures, DayFigures, Reconciliation, Unmatched
from exporter.ledger.reconcile.matching import reconcile
from exporter.ledger.reconcile.models import bill_model, gateway_provider
from exporter.ledger.reconcile.recorded import Recorded, recorded_of
from exporter.ledger.reconcile.true_up import TrueUp, true_up

__all__ = [
    "BillFigures",
    "DayFigures",
    "Reconciliation",
    "Recorded",
    "TrueUp",
    "Unmatched",
    "bill_model",
    "gateway_provider",
    "reconcile",
    "recorded_of",
    "true_up",
]

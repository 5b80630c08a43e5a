"""Right-sizing advice priced at the applied GPU price: MIG fits, idle GPUs, unused quota."""

from __future__ import annotations

from exporter.ledger.advice.advise import Advice, AdviceSet, Prices, Withheld, advise

__all__ = ["Advice", "AdviceSet", "Prices", "Withheld", "advise"]

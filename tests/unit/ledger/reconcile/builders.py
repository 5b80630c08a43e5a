"""Bills, configs and records built in the shapes the bill sources and the join give."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from exporter.config.bills import BillsConfig
from exporter.sources.bills.lines import BilledLine, BillKind, BillSnapshot

__all__ = ["bills_config", "cluster_line", "llm_line", "snapshot"]


def bills_config(sources: Mapping[str, Mapping[str, Any]], **rest: Any) -> BillsConfig:
    """A bills section as the YAML would give it."""
    return BillsConfig.model_validate({"sources": dict(sources), **rest})


def llm_line(
    source: str, day: date, model: str, amount: float, *, currency: str = "EUR", **rest: Any
) -> BilledLine:
    """One LLM provider's line."""
    provider = rest.pop("provider", source)
    return BilledLine(
        source=source,
        provider=provider,
        kind=BillKind.LLM,
        day=day,
        amount=amount,
        currency=currency,
        model=model,
        **rest,
    )


def cluster_line(source: str, day: date, node: str, amount: float, **rest: Any) -> BilledLine:
    """One cloud export's row for a node of the cluster."""
    return BilledLine(
        source=source,
        provider=rest.pop("provider", "aws"),
        kind=BillKind.CLUSTER,
        day=day,
        amount=amount,
        currency=rest.pop("currency", "EUR"),
        resource_id=node,
        **rest,
    )


def snapshot(
    source: str, kind: BillKind, lines: Iterable[BilledLine], days: Iterable[date]
) -> BillSnapshot:
    """A bill source's read, its lines given in any order."""
    return BillSnapshot(source=source, kind=kind, lines=tuple(lines), days_billed=frozenset(days))

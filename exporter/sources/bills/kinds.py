"""The bill sources' rows of the source table: one per configured bill, named `bills.<name>`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from exporter.config.bills import BillSourceConfig
from exporter.config.schema import Config
from exporter.sources.bills import anthropic_costs, focus_export, openai_costs
from exporter.sources.bills.lines import BillSnapshot
from exporter.sources.bills.settings import BillShared, source_name
from exporter.sources.kind import SourceKind
from exporter.sources.reading import Reading

__all__ = ["BILL_PREFIX", "bill_kinds"]

BILL_PREFIX = source_name("")

Fetch = Callable[[httpx.Client, Any, BillShared, Reading], BillSnapshot]
_READERS: dict[str, tuple[Callable[[Any], httpx.Client], Fetch]] = {
    "focus": (focus_export.build_client, focus_export.fetch),
    "openai": (openai_costs.build_client, openai_costs.fetch),
    "anthropic": (anthropic_costs.build_client, anthropic_costs.fetch),
}


def bill_kinds(config: Config) -> list[SourceKind[Any, BillShared, BillSnapshot]]:
    """A source per configured bill, in name order, each failing on its own."""
    return [_kind(name, cfg) for name, cfg in sorted(config.bills.sources.items())]


def _kind(name: str, cfg: BillSourceConfig) -> SourceKind[Any, BillShared, BillSnapshot]:
    build, fetch = _READERS[cfg.type]

    def section(config: Config) -> BillSourceConfig | None:
        return config.bills.sources.get(name)

    def shared(config: Config) -> BillShared:
        return BillShared(name, config.currency, dict(config.bills.currency_rates))

    return SourceKind(
        source_name(name),
        BillSnapshot,
        section,
        shared,
        build,
        fetch,
        key=("bills", "sources", name),
    )

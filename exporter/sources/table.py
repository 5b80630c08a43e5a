"""The source table: every upstream the exporter reads, and the latest snapshot of each."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from exporter.config.schema import Config
from exporter.sources.bills.kinds import BILL_PREFIX, bill_kinds
from exporter.sources.bills.lines import BillSnapshot
from exporter.sources.dcgm import source as dcgm
from exporter.sources.dcgm.source import DcgmSnapshot
from exporter.sources.kind import SourceKind
from exporter.sources.kueue import source as kueue
from exporter.sources.kueue.source import KueueSnapshot
from exporter.sources.kueue_metrics import source as kueue_metrics
from exporter.sources.kueue_metrics.metrics import KueueMetrics
from exporter.sources.litellm import source as litellm
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.opencost import source as opencost
from exporter.sources.opencost.source import OpenCostSnapshot
from exporter.sources.vllm import source as vllm
from exporter.sources.vllm.source import VllmSnapshot

__all__ = ["SOURCES", "Snapshots", "configured_kinds"]

# A sixth source adds its module's KIND here and a field of the same name to Snapshots.
SOURCES: Mapping[str, SourceKind[Any, Any, Any]] = {
    kind.name: kind
    for kind in (
        opencost.KIND,
        dcgm.KIND,
        kueue.KIND,
        litellm.KIND,
        vllm.KIND,
        kueue_metrics.KIND,
    )
}


def configured_kinds(config: Config) -> list[SourceKind[Any, Any, Any]]:
    """The table's rows for `config`: the fixed sources, then one per configured bill
    (`bills.<name>`: each its own source, with its own `source_up` and failures)."""
    return [*SOURCES.values(), *bill_kinds(config)]


@dataclass(frozen=True)
class Snapshots:
    """The latest fresh snapshot of each source; None when it is not configured or stale."""

    opencost: OpenCostSnapshot | None = None
    dcgm: DcgmSnapshot | None = None
    kueue: KueueSnapshot | None = None
    litellm: LiteLLMSnapshot | None = None
    vllm: VllmSnapshot | None = None
    kueue_metrics: KueueMetrics | None = None
    # Each fresh bill by its configured name (the key under `bills.sources`); a bill that is
    # stale or failing is absent, as a source's None.
    bills: Mapping[str, BillSnapshot] = field(default_factory=dict)

    @classmethod
    def of(cls, snapshots: Mapping[str, object]) -> Snapshots:
        """Bundle snapshots keyed by source name, checking each is its source's snapshot type."""
        fixed: dict[str, object] = {}
        bills: dict[str, BillSnapshot] = {}
        for name, snapshot in snapshots.items():
            if name.startswith(BILL_PREFIX):
                if not isinstance(snapshot, BillSnapshot | None):
                    raise TypeError(f"{name}: expected BillSnapshot, got {type(snapshot)}")
                if snapshot is not None:
                    bills[name.removeprefix(BILL_PREFIX)] = snapshot
                continue
            expected = SOURCES[name].snapshot
            if not isinstance(snapshot, expected):
                raise TypeError(f"{name}: expected {expected.__name__}, got {type(snapshot)}")
            fixed[name] = snapshot
        return cls(**fixed, bills=bills)  # type: ignore[arg-type]

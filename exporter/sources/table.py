"""The source table: every upstream the exporter reads, and the latest snapshot of each."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from exporter.sources.bills.lines import BillSnapshot
from exporter.sources.dcgm import source as dcgm
from exporter.sources.dcgm.source import DcgmSnapshot
from exporter.sources.kind import SourceKind
from exporter.sources.kueue import source as kueue
from exporter.sources.kueue.source import KueueSnapshot
from exporter.sources.litellm import source as litellm
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.opencost import source as opencost
from exporter.sources.opencost.source import OpenCostSnapshot
from exporter.sources.vllm import source as vllm
from exporter.sources.vllm.source import VllmSnapshot

__all__ = ["SOURCES", "Snapshots"]

# A fifth source adds its module's KIND here and a field of the same name to Snapshots.
SOURCES: Mapping[str, SourceKind[Any, Any, Any]] = {
    kind.name: kind for kind in (opencost.KIND, dcgm.KIND, kueue.KIND, litellm.KIND, vllm.KIND)
}


@dataclass(frozen=True)
class Snapshots:
    """The latest fresh snapshot of each source; None when it is not configured or stale."""

    opencost: OpenCostSnapshot | None = None
    dcgm: DcgmSnapshot | None = None
    kueue: KueueSnapshot | None = None
    litellm: LiteLLMSnapshot | None = None
    vllm: VllmSnapshot | None = None
    # Each bill source's latest read, by its configured name (exporter.sources.bills).
    bills: Mapping[str, BillSnapshot] = field(default_factory=dict)

    @classmethod
    def of(cls, snapshots: Mapping[str, object]) -> Snapshots:
        """Bundle snapshots keyed by source name, checking each is its source's snapshot type."""
        for name, snapshot in snapshots.items():
            expected = SOURCES[name].snapshot
            if not isinstance(snapshot, expected):
                raise TypeError(f"{name}: expected {expected.__name__}, got {type(snapshot)}")
        return cls(**snapshots)  # type: ignore[arg-type]

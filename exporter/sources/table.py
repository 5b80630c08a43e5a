"""The source table's snapshots: the latest of each upstream the exporter reads, by name.

Snapshot types only: the join reads these and never a source's client (the sources themselves,
with their clients, are in exporter/sources/registry.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from exporter.sources.bills.lines import BillSnapshot
from exporter.sources.bills.settings import source_name
from exporter.sources.dcgm.records import DcgmSnapshot
from exporter.sources.kueue.records import KueueSnapshot
from exporter.sources.kueue_metrics.records import KueueMetrics
from exporter.sources.litellm.snapshot import LiteLLMSnapshot
from exporter.sources.opencost.snapshot import OpenCostSnapshot
from exporter.sources.vllm.records import VllmSnapshot

__all__ = ["BILL_PREFIX", "SNAPSHOT_TYPES", "Snapshots"]

# The source name of a bill is this prefix and its configured name (bills.<name>).
BILL_PREFIX = source_name("")

# Each fixed source's snapshot type, in the table's order (registry.SOURCES has the same names).
SNAPSHOT_TYPES: Mapping[str, type] = {
    "opencost": OpenCostSnapshot,
    "dcgm": DcgmSnapshot,
    "kueue": KueueSnapshot,
    "litellm": LiteLLMSnapshot,
    "vllm": VllmSnapshot,
    "kueue_metrics": KueueMetrics,
}


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
            expected = SNAPSHOT_TYPES[name]
            if not isinstance(snapshot, expected):
                raise TypeError(f"{name}: expected {expected.__name__}, got {type(snapshot)}")
            fixed[name] = snapshot
        return cls(**fixed, bills=bills)  # type: ignore[arg-type]

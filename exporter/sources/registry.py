"""The sources the exporter can read: each upstream's row (its fetch, client and config section).

Apart from the snapshot types (exporter/sources/table.py) so that the join, which only reads
snapshots, never loads a source's client: what builds readers imports this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from exporter.config.schema import Config
from exporter.sources.bills.kinds import bill_kinds
from exporter.sources.dcgm import source as dcgm
from exporter.sources.kind import SourceKind
from exporter.sources.kueue import source as kueue
from exporter.sources.kueue_metrics import source as kueue_metrics
from exporter.sources.litellm import source as litellm
from exporter.sources.opencost import source as opencost
from exporter.sources.vllm import source as vllm

__all__ = ["SOURCES", "configured_kinds"]

# A sixth source adds its module's KIND here, a field of the same name to Snapshots and its
# snapshot type to table.SNAPSHOT_TYPES.
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

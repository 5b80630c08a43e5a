"""Kueue ResourceFlavors: which nodes each quota flavor stands for (`spec.nodeLabels`).

Upstream: `GET /apis/kueue.x-k8s.io/<version>/resourceflavors` (cluster-scoped, a
`ResourceFlavorList`). Only `metadata.name` and `spec.nodeLabels` matter here; taints,
tolerations and topology do not change which nodes a flavor's quota stands for. A flavor
without `nodeLabels` matches every node, as it does for Kueue's scheduler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from exporter.sources.checks import MISSING_FIELD, WRONG_TYPE, BadRecord, Tally, label

__all__ = ["FlavorRecord", "parse_resource_flavor", "parse_resource_flavors"]


@dataclass(frozen=True)
class FlavorRecord:
    """One ResourceFlavor: its name and the node labels that select its nodes."""

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)


def parse_resource_flavor(item: Any) -> FlavorRecord:
    """One ResourceFlavor object, or BadRecord."""
    if not isinstance(item, dict):
        raise BadRecord(WRONG_TYPE, "a ResourceFlavor is not an object")
    meta = item.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        raise BadRecord(MISSING_FIELD, "a ResourceFlavor has no metadata.name")
    label(name, "a ResourceFlavor's metadata.name")
    spec = item.get("spec") or {}
    if not isinstance(spec, dict):
        raise BadRecord(WRONG_TYPE, f"ResourceFlavor {name!r}: spec is not an object")
    labels = spec.get("nodeLabels") or {}
    if not isinstance(labels, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
    ):
        raise BadRecord(WRONG_TYPE, f"ResourceFlavor {name!r}: nodeLabels is not a map of text")
    for key, value in labels.items():
        label(key, f"ResourceFlavor {name!r}: a nodeLabels key")
        label(value, f"ResourceFlavor {name!r}: nodeLabels[{key[:60]!r}]")
    return FlavorRecord(name, dict(sorted(labels.items())))


def parse_resource_flavors(items: list[Any], tally: Tally) -> tuple[FlavorRecord, ...]:
    """Every readable flavor, sorted by name; a broken one is dropped and counted."""
    out: dict[str, FlavorRecord] = {}
    for item in items:
        try:
            record = parse_resource_flavor(item)
        except BadRecord as exc:
            tally.drop(exc)
            continue
        out.setdefault(record.name, record)
    return tuple(out[name] for name in sorted(out))

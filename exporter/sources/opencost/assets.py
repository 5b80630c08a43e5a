"""OpenCost node assets: each GPU node's GPU cost, GPU-hours, GPU count and node labels.

Upstream: `GET /assets?window=<unix>,<unix>&accumulate=true`; `data` is one object keyed by
asset, and node assets (`type: "Node"`) carry `properties.name`, sanitised node `labels`,
`gpuCost` (the window's total), `GPUHours` (capital G) and `gpuCount`.

Why assets, and not only allocations: an allocation's `gpuCost / gpuHours` is the price OpenCost
charged on its node, but only nodes that ran a GPU pod have one, and allocations carry pod
labels, not node labels. Assets price every GPU node, idle ones included, and their labels are
what Kueue ResourceFlavor `nodeLabels` select on. Allocations remain the fallback (and the
first choice where they exist, see exporter.ledger.prices.gpu) when `/assets` is not served.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import httpx

from exporter.errors import UpstreamPayloadError, UpstreamStatusError
from exporter.sources.checks import (
    MAX_COST,
    MAX_GPUS,
    MISSING_FIELD,
    WRONG_TYPE,
    BadRecord,
    Tally,
    label,
    number,
)
from exporter.sources.http import get_json
from exporter.sources.opencost.snapshot import GpuNode

__all__ = ["GpuNode", "fetch_gpu_nodes", "parse_gpu_nodes"]

SOURCE = "opencost"
# Assets print 6 decimals: a non-zero figure below 1e-9 is not something OpenCost writes.
_RESOLUTION = 1e-9
_YEAR_HOURS = 366 * 24.0


def fetch_gpu_nodes(
    client: httpx.Client, start: datetime, end: datetime, tally: Tally | None = None
) -> tuple[GpuNode, ...] | None:
    """The GPU nodes of one window, or None when this OpenCost serves no `/assets` (404)."""
    params = {"window": f"{int(start.timestamp())},{int(end.timestamp())}", "accumulate": "true"}
    try:
        body = get_json(client, SOURCE, "/assets", params)
    except UpstreamStatusError as exc:
        # A proxy that exposes only /allocation answers 404: prices then come from allocations.
        if exc.status == 404:
            return None
        raise
    hours = (end - start).total_seconds() / 3600.0
    return parse_gpu_nodes(body, hours=hours, tally=tally)


def parse_gpu_nodes(
    body: Any, *, hours: float | None = None, tally: Tally | None = None
) -> tuple[GpuNode, ...]:
    """Node assets with GPUs from an `/assets` body, sorted by name; bad ones dropped and counted.

    A node listed twice (one per provider ID, after a node was replaced) is summed.
    """
    tally = Tally() if tally is None else tally
    data = _data(body)
    max_hours = MAX_GPUS * (_YEAR_HOURS if hours is None else hours)
    nodes: dict[str, GpuNode] = {}
    for key, asset in sorted(data.items()):
        if not isinstance(asset, dict) or asset.get("type") != "Node":
            continue
        try:
            node = _node(str(key), asset, max_hours)
        except BadRecord as exc:
            tally.drop(exc)
            continue
        if node.gpu_count <= 0 and node.gpu_hours <= 0:
            continue
        seen = nodes.get(node.name)
        nodes[node.name] = node if seen is None else _sum(seen, node)
    return tuple(nodes[name] for name in sorted(nodes))


def _data(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or "data" not in body:
        raise UpstreamPayloadError(f"{SOURCE}: /assets: expected an object with a data field")
    code = body.get("code", 200)
    if code != 200:
        raise UpstreamPayloadError(f"{SOURCE}: /assets: code {code}: {body.get('message', '')}")
    data = body["data"]
    if isinstance(data, list):  # some builds wrap the asset set in a list of one
        data = data[0] if data else {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UpstreamPayloadError(f"{SOURCE}: /assets data: expected an object")
    return data


def _node(key: str, asset: Mapping[str, Any], max_hours: float) -> GpuNode:
    props = asset.get("properties")
    name = props.get("name") if isinstance(props, dict) else None
    if not isinstance(name, str) or not name:
        raise BadRecord(MISSING_FIELD, f"node asset {key!r} has no name")
    label(name, f"node asset {key[:60]!r}: properties.name")
    labels = asset.get("labels") or {}
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise BadRecord(WRONG_TYPE, f"node asset {key!r}: labels is not a map")
    for k, v in labels.items():
        label(k, f"node asset {key[:60]!r}: a label key")
        label(v, f"node asset {key[:60]!r}: label {k[:60]!r}")

    def value(field_name: str, high: float) -> float:
        what = f"node asset {key!r}: {field_name}"
        return number(asset.get(field_name), what, low=0.0, high=high, null=0.0, tiny=_RESOLUTION)

    return GpuNode(
        name=name,
        gpu_count=value("gpuCount", MAX_GPUS),
        gpu_hours=value("GPUHours", max_hours),
        gpu_cost=value("gpuCost", MAX_COST),
        labels={str(k): v for k, v in labels.items()},
    )


def _sum(a: GpuNode, b: GpuNode) -> GpuNode:
    return GpuNode(
        a.name,
        max(a.gpu_count, b.gpu_count),
        a.gpu_hours + b.gpu_hours,
        a.gpu_cost + b.gpu_cost,
        {**b.labels, **a.labels},
    )

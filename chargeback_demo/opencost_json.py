"""How OpenCost lays out allocations in JSON: rounding, merging, accumulating, sharing idle."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

__all__ = ["PROPS", "accumulate", "iso", "merge_rows", "render", "round5", "sanitise", "share_idle"]

PROPS = ("cluster", "node", "namespace", "controllerKind", "controller", "pod", "container")


def round5(value: float) -> float | int:
    rounded = round(value, 5)
    return int(rounded) if rounded == int(rounded) else rounded


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sanitise(key: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", key)


_NUMERIC_SUMS = (
    "minutes",
    "cpuCoreHours",
    "gpuHours",
    "ramByteHours",
    "pvByteHours",
    "networkTransferBytes",
    "cpuCost",
    "gpuCost",
    "ramCost",
    "pvCost",
    "networkCost",
)


def merge_rows(key: str, members: list[dict[str, Any]], keep_meta: bool) -> dict[str, Any]:
    if len(members) == 1:
        return render(key, members[0])
    merged: dict[str, Any] = {f: sum(m.get(f, 0.0) for m in members) for f in _NUMERIC_SUMS}
    props: dict[str, Any] = {}
    for prop in PROPS:
        values = {m["properties"].get(prop) for m in members}
        if len(values) == 1:
            props[prop] = values.pop()
    if keep_meta:
        common = set.intersection(*(set(m["properties"]["labels"].items()) for m in members))
        props["labels"] = dict(sorted(common))
        notes = [set(m["properties"].get("annotations", {}).items()) for m in members]
        if set.intersection(*notes):
            props["annotations"] = dict(sorted(set.intersection(*notes)))
    ns = {m["properties"]["namespace"] for m in members}
    if len(ns) == 1:
        props["namespaceLabels"] = members[0]["properties"]["namespaceLabels"]
        if "namespaceAnnotations" in members[0]["properties"]:
            props["namespaceAnnotations"] = members[0]["properties"]["namespaceAnnotations"]
    # OpenCost's Allocation.add keeps the first member's gpuAllocation (null stays null).
    merged.update(
        gpuAllocation=members[0].get("gpuAllocation"),
        properties=props,
        window=members[0]["window"],
        start=min(m["start"] for m in members),
        end=max(m["end"] for m in members),
    )
    return render(key, merged)


def render(name: str, row: dict[str, Any]) -> dict[str, Any]:
    """Lay an allocation out as OpenCost's JSON does: every field, numbers rounded."""
    hours = row.get("minutes", 0.0) / 60.0
    gpu_hours = row.get("gpuHours", 0.0)
    out: dict[str, Any] = {
        "name": name,
        "properties": row["properties"],
        "window": row["window"],
        "start": row["start"],
        "end": row["end"],
        "minutes": row.get("minutes", 0.0),
        "cpuCores": row.get("cpuCoreHours", 0.0) / hours if hours else 0.0,
        "cpuCoreRequestAverage": 0.0,
        "cpuCoreUsageAverage": 0.0,
        "cpuCoreHours": row.get("cpuCoreHours", 0.0),
        "cpuCost": row.get("cpuCost"),
        "cpuCostAdjustment": 0,
        "cpuCostIdle": 0,
        "cpuEfficiency": 0,
        "gpuCount": gpu_hours / hours if hours else 0.0,
        "gpuHours": gpu_hours,
        "gpuCost": row.get("gpuCost"),
        "gpuCostAdjustment": 0,
        "gpuCostIdle": 0,
        "gpuEfficiency": 0,
        "networkTransferBytes": row.get("networkTransferBytes", 0.0),
        "networkReceiveBytes": 0,
        "networkCost": row.get("networkCost", 0.0),
        "networkCrossZoneCost": 0,
        "networkCrossRegionCost": 0,
        "networkInternetCost": 0,
        "networkCostAdjustment": 0,
        "loadBalancerCost": 0,
        "loadBalancerCostAdjustment": 0,
        "pvBytes": 0,
        "pvByteHours": row.get("pvByteHours", 0.0),
        "pvCost": row.get("pvCost", 0.0),
        "pvs": None,
        "pvCostAdjustment": 0,
        "ramBytes": row.get("ramByteHours", 0.0) / hours if hours else 0.0,
        "ramByteHours": row.get("ramByteHours", 0.0),
        "ramCost": row.get("ramCost"),
        "ramCostAdjustment": 0,
        "ramCostIdle": 0,
        "ramEfficiency": 0,
        "externalCost": 0,
        "sharedCost": 0,
        "proportionalAssetResourceCosts": {},
        "lbAllocations": None,
        "sharedCostBreakdown": {},
        "gpuAllocation": row.get("gpuAllocation"),
    }
    costs = ("cpuCost", "gpuCost", "ramCost", "pvCost", "networkCost")
    out["totalCost"] = sum(out[c] or 0.0 for c in costs)
    return {k: round5(v) if isinstance(v, float) else v for k, v in out.items()}


def accumulate(sets: list[dict[str, Any]]) -> dict[str, Any]:
    totals: dict[str, dict[str, Any]] = {}
    for step in sets:
        for name, alloc in step.items():
            if name not in totals:
                totals[name] = dict(alloc)
                continue
            acc = totals[name]
            for field, value in alloc.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    acc[field] = round5((acc.get(field) or 0) + value)
    return totals


def share_idle(allocs: dict[str, Any], idle: dict[str, Any]) -> dict[str, Any] | None:
    """OpenCost's shareIdle: each resource's idle goes to allocations by that resource's cost."""
    leftover = dict(idle)
    for resource in ("cpuCost", "gpuCost", "ramCost"):
        total = sum(a[resource] or 0 for a in allocs.values())
        amount = idle[resource] or 0
        if total <= 0:
            continue
        for alloc in allocs.values():
            share = amount * (alloc[resource] or 0) / total
            alloc[resource] = round5((alloc[resource] or 0) + share)
            alloc["totalCost"] = round5(alloc["totalCost"] + share)
        leftover[resource] = 0
    if not any(leftover[r] for r in ("cpuCost", "gpuCost", "ramCost")):
        return None
    return leftover

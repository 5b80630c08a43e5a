"""OpenCost source: fetch `/allocation` (and `/assets` for per-node idle) into typed records.

Why these query parameters:

- `includeIdle=true&shareIdle=false`: we apply our own idle policy, so idle must arrive as its
  own `__idle__` entry instead of being folded into workload costs where it cannot be seen.
- `aggregate=node,namespace,controller` with `includeAggregatedMetadata=true`: attribution
  needs the namespace and the workload labels, and `idle_by_node` needs the node. Aggregating
  by controller keeps the response small on large clusters (pods of one controller share
  their template labels, so the label intersection OpenCost keeps still names the team), and
  without `includeAggregatedMetadata` OpenCost drops labels from aggregated entries.
- `accumulate=true` over an explicit unix-seconds window: one set per query, and explicit
  windows are not rounded to hour or day boundaries the way `1h` or `7d` are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx

from exporter.calendar import month_start
from exporter.config import Config, OpenCostConfig
from exporter.errors import UpstreamIncomplete, UpstreamPayloadError
from exporter.sources.checks import (
    MAX_COST,
    MAX_GPUS,
    MISSING_FIELD,
    WRONG_TYPE,
    BadRecord,
    Tally,
    nothing_left,
    number,
)
from exporter.sources.http import get_json, make_client
from exporter.sources.kind import SourceKind, section

__all__ = [
    "KIND",
    "Allocation",
    "AllocationSet",
    "OpenCostSnapshot",
    "build_client",
    "fetch",
    "fetch_window",
    "parse_allocation_response",
    "parse_node_assets",
]

SOURCE = "opencost"
IDLE_KEY = "__idle__"
AGGREGATE = "node,namespace,controller"

# Component -> the OpenCost fields that add up to it (cost plus its adjustment).
COMPONENT_FIELDS: dict[str, tuple[str, ...]] = {
    "gpu": ("gpuCost", "gpuCostAdjustment"),
    "cpu": ("cpuCost", "cpuCostAdjustment"),
    "ram": ("ramCost", "ramCostAdjustment"),
    "storage": ("pvCost", "pvCostAdjustment"),
    "network": ("networkCost", "networkCostAdjustment"),
    "other": (
        "loadBalancerCost",
        "loadBalancerCostAdjustment",
        "sharedCost",
        "externalCost",
    ),
}
IDLE_FIELDS: dict[str, str] = {"gpu": "gpuCost", "cpu": "cpuCost", "ram": "ramCost"}
# When the window is not known, bound GPU-hours by what MAX_GPUS could run in a leap year.
_YEAR_HOURS = 366 * 24.0
# OpenCost rounds its numbers to 5 decimals (assets and older builds print 6), so a non-zero
# cost or GPU-hour figure below 1e-9 is not something it writes. Refusing those keeps the
# maths clear of denormals: a split of idle (cost x weight / total) cannot underflow to 0 and
# lose money, and the GPU-hour price (GPU cost / GPU-hours) cannot overflow.
_RESOLUTION = 1e-9


@dataclass(frozen=True)
class Allocation:
    """One OpenCost allocation (a controller's pods on a node) and what it cost in the window."""

    name: str  # OpenCost's key, node/namespace/controller: the sets of a window merge by it
    namespace: str
    node: str
    labels: Mapping[str, str]
    namespace_labels: Mapping[str, str]
    costs: Mapping[str, float]
    gpu_hours: float
    # gpuAllocation.gpuModel (DCGM's modelName, as OpenCost saw it); "" when absent or mixed.
    gpu_model: str = ""


@dataclass(frozen=True)
class AllocationSet:
    """Every allocation of one window, the cluster's idle cost per resource, and node costs."""

    start: datetime
    end: datetime
    allocations: tuple[Allocation, ...]
    idle: Mapping[str, float]
    node_costs: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    @property
    def hours(self) -> float:
        """Length of the window in hours."""
        return (self.end - self.start).total_seconds() / 3600.0

    def total(self) -> float:
        """The cluster's cost in the window: allocations plus idle."""
        spent = sum(sum(a.costs.values()) for a in self.allocations)
        return spent + sum(self.idle.values())

    def empty(self) -> bool:
        """True when OpenCost reported nothing at all: no allocation and no idle cost."""
        return not self.allocations and not any(self.idle.values())


@dataclass(frozen=True)
class OpenCostSnapshot:
    """The two windows the exporter needs: the recent one (for rates) and the month so far."""

    rate: AllocationSet
    month: AllocationSet
    dropped: Mapping[str, int] = field(default_factory=dict)

    def check_after(self, previous: object | None) -> None:
        """An empty month-to-date after the same month had data is a lost read, not zero cost.

        Month-to-date only grows within a month, so nothing confirms an empty reply; a new
        month (another start) legitimately begins again from nothing.
        """
        if not isinstance(previous, OpenCostSnapshot) or previous.month.start != self.month.start:
            return
        if self.month.empty() and not previous.month.empty():
            raise UpstreamIncomplete(
                f"{SOURCE}: /allocation returned nothing for the month to date, "
                "which had data in the last good read; keeping that read"
            )


def build_client(cfg: OpenCostConfig, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """The OpenCost client: no auth on the read API, an explicit timeout."""
    return make_client(cfg.url, cfg.timeout, ca_file=cfg.ca_file, transport=transport)


def fetch(client: httpx.Client, config: Config, now: datetime) -> OpenCostSnapshot:
    """Fetch the rate window (the last `rate_window`) and the month-to-date window.

    The month starts at midnight of the 1st in the configured time zone; node assets are read
    only when idle is split by node, the one policy that needs them.
    """
    cfg = section(config.sources.opencost, SOURCE)
    by_node, tally = config.idle_by_node, Tally()
    rate = fetch_window(client, now - cfg.rate_window, now, with_node_costs=by_node, tally=tally)
    month_from = month_start(now, config.zone)
    month = fetch_window(client, month_from, now, with_node_costs=by_node, tally=tally)
    return OpenCostSnapshot(rate=rate, month=month, dropped=tally.frozen())


def fetch_window(
    client: httpx.Client,
    start: datetime,
    end: datetime,
    *,
    with_node_costs: bool = False,
    tally: Tally | None = None,
) -> AllocationSet:
    """Query one window of allocations (and node assets when idle is split by node).

    Bad records are dropped and counted in `tally`; if every one was bad, the read fails.
    """
    if end - start < timedelta(seconds=1):
        raise ValueError("window must be at least one second long")
    window = f"{int(start.timestamp())},{int(end.timestamp())}"
    params = {
        "window": window,
        "aggregate": AGGREGATE,
        "accumulate": "true",
        "includeIdle": "true",
        "shareIdle": "false",
        "includeAggregatedMetadata": "true",
    }
    local = Tally()  # this window's drops, so "every one was bad" is judged per window
    hours = (end - start).total_seconds() / 3600.0
    body = get_json(client, SOURCE, "/allocation", params)
    allocations, idle = parse_allocation_response(body, hours=hours, tally=local)
    node_costs: dict[str, dict[str, float]] = {}
    if with_node_costs:
        assets = get_json(client, SOURCE, "/assets", {"window": window, "accumulate": "true"})
        node_costs = parse_node_assets(assets, tally=local)
    nothing_left(SOURCE, len(allocations) + len(idle), local, "allocation")
    if tally is not None:
        tally.update(local)
    return AllocationSet(start, end, allocations, idle, node_costs)


def parse_allocation_response(
    body: Any, *, hours: float | None = None, tally: Tally | None = None
) -> tuple[tuple[Allocation, ...], dict[str, float]]:
    """Parse an `/allocation` body (old or new envelope) into allocations and idle cost.

    Several sets (steps) are summed, since the exporter asks for one accumulated window. An
    allocation or idle entry with a bad field is dropped and counted in `tally`; `hours` (the
    window) bounds GPU-hours.
    """
    tally = Tally() if tally is None else tally
    max_gpu_hours = MAX_GPUS * (_YEAR_HOURS if hours is None else hours)
    data = _envelope_data(body, "/allocation")
    if data is None:
        return (), {}
    if not isinstance(data, list):
        raise UpstreamPayloadError(f"{SOURCE}: /allocation data: expected a list of sets")
    merged: dict[str, Allocation] = {}
    idle: dict[str, float] = {}
    for step in data:
        if step is None:
            continue
        if not isinstance(step, dict):
            raise UpstreamPayloadError(f"{SOURCE}: /allocation set: expected an object")
        for name, raw in step.items():
            try:
                if not isinstance(raw, dict):
                    raise BadRecord(WRONG_TYPE, f"allocation {name!r} is not an object")
                if name == IDLE_KEY:
                    part = {r: _number(raw, f, name) for r, f in IDLE_FIELDS.items()}
                    for resource, amount in part.items():
                        idle[resource] = idle.get(resource, 0.0) + amount
                    continue
                allocation = _allocation(name, raw, max_gpu_hours)
            except BadRecord as exc:
                tally.drop(exc)
                continue
            # One key per set (a JSON object); the same key in another step is more of it.
            merged[name] = _merge(merged[name], allocation) if name in merged else allocation
    return tuple(merged[k] for k in sorted(merged)), idle


def parse_node_assets(body: Any, *, tally: Tally | None = None) -> dict[str, dict[str, float]]:
    """Per-node cost of GPU, CPU and RAM from an `/assets` body (`data` is one object).

    A node asset without a name or with a bad cost is dropped and counted in `tally`.
    """
    tally = Tally() if tally is None else tally
    data = _envelope_data(body, "/assets")
    if data is None:
        return {}
    if isinstance(data, list):  # some builds wrap the asset set in a list of one
        data = data[0] if data else {}
    if not isinstance(data, dict):
        raise UpstreamPayloadError(f"{SOURCE}: /assets data: expected an object")
    nodes: dict[str, dict[str, float]] = {}
    for key, asset in data.items():
        if not isinstance(asset, dict) or asset.get("type") != "Node":
            continue
        props = asset.get("properties")
        name = props.get("name") if isinstance(props, dict) else None
        try:
            if not isinstance(name, str) or not name:
                raise BadRecord(MISSING_FIELD, f"node asset {key!r} has no name")
            part = {r: _number(asset, f, key) for r, f in IDLE_FIELDS.items()}
        except BadRecord as exc:
            tally.drop(exc)
            continue
        costs = nodes.setdefault(name, {"gpu": 0.0, "cpu": 0.0, "ram": 0.0})
        for resource, amount in part.items():
            costs[resource] += amount
    return nodes


def _envelope_data(body: Any, path: str) -> Any:
    # Before mid-2025 the envelope also carried "status"; both forms put the payload in "data".
    if not isinstance(body, dict) or "data" not in body:
        raise UpstreamPayloadError(f"{SOURCE}: {path}: expected an object with a data field")
    code = body.get("code", 200)
    if code != 200:
        raise UpstreamPayloadError(f"{SOURCE}: {path}: code {code}: {body.get('message', '')}")
    return body["data"]


def _allocation(name: str, raw: Mapping[str, Any], max_gpu_hours: float) -> Allocation:
    props = raw.get("properties") or {}
    if not isinstance(props, dict):
        raise BadRecord(WRONG_TYPE, f"allocation {name!r}: properties is not an object")
    costs = {
        c: sum(_number(raw, f, name) for f in fields) for c, fields in COMPONENT_FIELDS.items()
    }
    return Allocation(
        name=name,
        namespace=_text(props, "namespace", name),
        node=_text(props, "node", name),
        labels=_labels(props, "labels", name),
        namespace_labels=_labels(props, "namespaceLabels", name),
        costs=costs,
        gpu_hours=_gpu_hours(raw, name, max_gpu_hours),
        gpu_model=_gpu_model(raw),
    )


def _gpu_model(raw: Mapping[str, Any]) -> str:
    # Metadata only (OpenCost fills it when DCGM labels its series): a bad one is not a bad
    # allocation, just an unknown model.
    gpu = raw.get("gpuAllocation")
    model = gpu.get("gpuModel") if isinstance(gpu, dict) else None
    return model if isinstance(model, str) else ""


def _gpu_hours(raw: Mapping[str, Any], name: str, high: float) -> float:
    return _number(raw, "gpuHours", name, low=0.0, high=high)


def _merge(a: Allocation, b: Allocation) -> Allocation:
    costs = {c: a.costs.get(c, 0.0) + b.costs.get(c, 0.0) for c in COMPONENT_FIELDS}
    return Allocation(
        a.name,
        a.namespace,
        a.node,
        a.labels,
        a.namespace_labels,
        costs,
        a.gpu_hours + b.gpu_hours,
        _one_model(a.gpu_model, b.gpu_model),
    )


def _one_model(a: str, b: str) -> str:
    # A set that did not name the model says nothing; two that disagree make it unknown.
    if not a or not b:
        return a or b
    return a if a == b else ""


def _number(
    raw: Mapping[str, Any],
    key: str,
    name: str,
    *,
    low: float = -MAX_COST,
    high: float = MAX_COST,
) -> float:
    # OpenCost writes NaN and +-Inf as null; a missing field is an older build without it.
    # Costs may be negative (adjustments such as credits), never beyond MAX_COST either way.
    what = f"allocation {name!r}: {key}"
    return number(raw.get(key), what, low=low, high=high, null=0.0, tiny=_RESOLUTION)


def _text(props: Mapping[str, Any], key: str, name: str) -> str:
    value = props.get(key, "")
    if not isinstance(value, str):
        raise BadRecord(WRONG_TYPE, f"allocation {name!r}: properties.{key} is not text")
    return value


def _labels(props: Mapping[str, Any], key: str, name: str) -> dict[str, str]:
    value = props.get(key) or {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BadRecord(WRONG_TYPE, f"allocation {name!r}: properties.{key} is not a map")
    return {str(k): v for k, v in value.items()}


KIND = SourceKind(
    SOURCE, OpenCostSnapshot, lambda config: config.sources.opencost, build_client, fetch
)

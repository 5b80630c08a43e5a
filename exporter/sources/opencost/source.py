"""OpenCost source: fetch `/allocation` (and `/assets` for per-node idle) into typed records.

Why these query parameters:

- `includeIdle=true&shareIdle=false`: we apply our own idle policy, so idle must arrive as its
  own `__idle__` entry instead of being folded into workload costs where it cannot be seen.
- `aggregate=node,namespace,controller` with `includeAggregatedMetadata=true`: attribution
  needs the namespace and the workload labels, and `idle_by_node` needs the node. Aggregating
  by controller keeps the response small on large clusters (pods of one controller share
  their template labels, so the label intersection OpenCost keeps still names the team), and
  without `includeAggregatedMetadata` OpenCost drops labels from aggregated entries.
- Explicit unix-seconds windows, which are not rounded to hour or day boundaries the way
  `1h` or `7d` are. The rate window is one accumulated set. The open month is read as daily
  sets with its closed days kept between refreshes (days); a closed month as one window, or
  day by day for the FOCUS export (by_day).
- Bodies are decoded from bytes into typed records (wire), never into text and a
  tree of dicts first: a month on a large cluster is tens of megabytes of JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from exporter.config.schema import Config, OpenCostConfig
from exporter.errors import UpstreamPayloadError
from exporter.sources.checks import (
    MAX_COST,
    MISSING_FIELD,
    BadRecord,
    Tally,
    label,
    number,
    refuse_dropped,
)
from exporter.sources.clients import make_client
from exporter.sources.http import get_json
from exporter.sources.kind import SourceKind
from exporter.sources.opencost.assets import fetch_gpu_nodes
from exporter.sources.opencost.body import parse_allocation_response, sorted_set
from exporter.sources.opencost.by_day import read_days
from exporter.sources.opencost.days import query, reader_for
from exporter.sources.opencost.snapshot import AllocationSet, OpenCostSnapshot, RunningSums
from exporter.sources.opencost.wire import (
    COMPONENT_FIELDS,
    IDLE_FIELDS,
    IDLE_KEY,
    RESOLUTION,
    Allocation,
    Totals,
)
from exporter.sources.reading import Reading

__all__ = [
    "COMPONENT_FIELDS",
    "IDLE_KEY",
    "KIND",
    "Allocation",
    "AllocationSet",
    "OpenCostShared",
    "OpenCostSnapshot",
    "build_client",
    "fetch",
    "fetch_window",
    "parse_allocation_response",
    "parse_node_assets",
    "shared_settings",
]

SOURCE = "opencost"


def build_client(cfg: OpenCostConfig, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """The OpenCost client: no auth on the read API, an explicit timeout."""
    return make_client(cfg.url, cfg.timeout, ca_file=cfg.ca_file, transport=transport)


@dataclass(frozen=True)
class OpenCostShared:
    """What the OpenCost source reads from outside `sources.opencost`."""

    idle_by_node: bool  # idle split by node, the one policy that needs the nodes' costs
    zone: ZoneInfo  # the zone the month's local days are kept in


def shared_settings(config: Config) -> OpenCostShared:
    """The OpenCost source's shared settings, built once by the wiring."""
    return OpenCostShared(idle_by_node=config.idle_by_node, zone=config.zone)


def fetch(
    client: httpx.Client, cfg: OpenCostConfig, shared: OpenCostShared, reading: Reading
) -> OpenCostSnapshot:
    """Fetch the rate window (the last `rate_window` of the reading) and the month's window.

    The open month is read as daily sets, its closed days kept between refreshes (see days);
    a closed month as one window, or each local day apart when the reading is `by_day`. Node
    assets are read only when idle is split by node, the one policy that needs them.
    """
    by_node, tally, until = shared.idle_by_node, Tally(), reading.until
    rate = fetch_window(
        client, until - cfg.rate_window, until, with_node_costs=by_node, tally=tally
    )
    if reading.by_day:
        return _by_day(client, reading, by_node, rate, tally)
    if reading.closed:
        month = fetch_window(
            client, reading.month.start, until, with_node_costs=by_node, tally=tally
        )
        refuse_dropped(SOURCE, tally, "records")
        return OpenCostSnapshot(rate=rate, month=month, dropped=tally.frozen())
    month_from = reading.month.start
    reader = reader_for(client)
    allocations, idle, repairs = reader.read(client, month_from, until, shared.zone, tally)
    node_costs = _node_costs(client, month_from, until, tally) if by_node else {}
    month = AllocationSet(month_from, until, allocations, idle, node_costs)
    window_start = until - cfg.rate_window
    nodes = fetch_gpu_nodes(client, window_start, until, tally) if cfg.node_assets else None
    refuse_dropped(SOURCE, tally, "records")
    return OpenCostSnapshot(
        rate=rate, month=month, dropped=tally.frozen(), gpu_nodes=nodes, repairs=repairs
    )


def _by_day(
    client: httpx.Client, reading: Reading, by_node: bool, rate: AllocationSet, tally: Tally
) -> OpenCostSnapshot:
    # Node costs are one small object per node: read per day only when idle is split by node.
    days = tuple(
        AllocationSet(start, end, allocations, idle, _day_nodes(client, start, end, by_node, tally))
        for start, end, allocations, idle in read_days(client, reading.days(), tally)
    )
    sums = RunningSums()
    for day in days:
        sums.add(day.allocations, day.idle, day.node_costs)
    month = AllocationSet(
        reading.month.start, reading.until, sums.allocations(), sums.idle(), sums.node_costs()
    )
    refuse_dropped(SOURCE, tally, "records")
    return OpenCostSnapshot(rate=rate, month=month, dropped=tally.frozen(), days=days)


def _day_nodes(
    client: httpx.Client, start: datetime, end: datetime, by_node: bool, tally: Tally
) -> dict[str, dict[str, float]]:
    return _node_costs(client, start, end, tally) if by_node else {}


def fetch_window(
    client: httpx.Client,
    start: datetime,
    end: datetime,
    *,
    with_node_costs: bool = False,
    tally: Tally | None = None,
) -> AllocationSet:
    """Query one window of allocations as one set (and node assets when idle is split by node).

    Bad records are counted in `tally`, and any one fails the read (refuse_dropped).
    """
    if end - start < timedelta(seconds=1):
        raise ValueError("window must be at least one second long")
    tally = Tally() if tally is None else tally
    totals = Totals()
    query(client, start, end, step=None, accumulate=True, tally=tally, into=totals)
    allocations, idle = sorted_set(totals)
    node_costs = _node_costs(client, start, end, tally) if with_node_costs else {}
    return AllocationSet(start, end, allocations, idle, node_costs)


def _node_costs(
    client: httpx.Client, start: datetime, end: datetime, tally: Tally
) -> dict[str, dict[str, float]]:
    # One object per node, small at any scale: read whole for the window every time.
    window = f"{int(start.timestamp())},{int(end.timestamp())}"
    assets = get_json(client, SOURCE, "/assets", {"window": window, "accumulate": "true"})
    return parse_node_assets(assets, tally=tally)


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
            label(name, f"node asset {key[:60]!r}: properties.name")
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


def _number(
    raw: Mapping[str, Any],
    key: str,
    name: str,
    *,
    low: float = 0.0,
    high: float = MAX_COST,
) -> float:
    # OpenCost writes NaN and +-Inf as null; a missing field is an older build without it.
    # A node's cost is its hours at its price: never negative (its adjustment is not read).
    what = f"node asset {name!r}: {key}"
    return number(raw.get(key), what, low=low, high=high, null=0.0, tiny=RESOLUTION)


KIND = SourceKind(
    SOURCE,
    OpenCostSnapshot,
    lambda config: config.sources.opencost,
    shared_settings,
    build_client,
    fetch,
)

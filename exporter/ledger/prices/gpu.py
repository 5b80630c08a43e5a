"""GPU-hour prices per Kueue flavor and per GPU model, never one blended price (pure).

How a flavor gets its price, first rule that answers:

1. `gpu_flavor_prices[flavor]` from config;
2. the flavor's nodes (ResourceFlavor `nodeLabels` matched against node labels; a flavor with no
   `nodeLabels`, or one Kueue did not list, stands for every node): what OpenCost charged per
   GPU-hour on them, GPU cost / GPU-hours of the allocations there (the rate window, else the
   month), with the GPU-hours of a node whose model has a `gpu_prices` entry at that price;
3. the same from OpenCost's node assets (nodes that ran no GPU pod still have a price there);
4. none: the caller falls back to the cluster's blended price.

Allocations come before assets because they are the money OpenCost actually put on teams: a
flavor that stands for every node then gets exactly the blended price, so a single-flavor
cluster is charged as before. A node's labels are its asset labels; a node OpenCost's assets do
not describe still gets `nvidia.com/gpu.product` from its DCGM `modelName` (in the spelling the
GPU feature discovery gives it: spaces become dashes), so flavors that select on the product
still find it. Label keys compare canonically (OpenCost sanitises `nvidia.com/gpu.product` to
`nvidia_com_gpu_product`); values compare exactly. Models compare case-insensitively, with runs
of spaces, dashes and underscores taken as one separator.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from exporter.gpu_names import canonical_model
from exporter.ledger.attribution import canonical_key, canonical_labels
from exporter.sources.dcgm.records import GpuRecord
from exporter.sources.kueue.flavors import FlavorRecord
from exporter.sources.opencost.snapshot import AllocationSet, GpuNode

__all__ = [
    "ASSETS",
    "CHARGED",
    "CONFIGURED",
    "GOVERNED",
    "PRODUCT_LABEL",
    "GpuPrices",
    "canonical_model",
    "node_models",
]

PRODUCT_LABEL = canonical_key("nvidia.com/gpu.product")
# Where a price came from (GpuPrices.model_source, flavor_source): the `by_model`/`by_flavor`
# prices given, what OpenCost charged on the allocations, OpenCost's node assets.
CONFIGURED, CHARGED, ASSETS = "configured", "opencost_charge", "opencost_assets"
# A model whose every node's GPU-hours are at a price its flavor's config or build governs.
GOVERNED = "flavor_price"
_SEPARATORS = re.compile(r"[\s_-]+")


def node_models(records: Iterable[GpuRecord]) -> dict[str, str]:
    """Node -> GPU model, from DCGM (the sorted-first model when a node has two)."""
    out: dict[str, str] = {}
    for record in sorted(records, key=lambda r: (r.node, r.model)):
        if record.node and record.model:
            out.setdefault(record.node, record.model)
    return out


@dataclass(frozen=True)
class _Node:
    labels: Mapping[str, str]  # canonical keys
    model: str  # canonical, "" when unknown


class GpuPrices:
    """Prices by flavor and by model over one refresh's records (see the module docstring)."""

    def __init__(
        self,
        windows: Sequence[AllocationSet],
        *,
        assets: Sequence[GpuNode] | None = None,
        flavors: Iterable[FlavorRecord] = (),
        dcgm_models: Mapping[str, str] | None = None,
        by_model: Mapping[str, float] | None = None,
        by_flavor: Mapping[str, float] | None = None,
        by_node: Mapping[str, float] | None = None,
    ) -> None:
        self._args = (windows, assets, flavors, dcgm_models, by_model, by_flavor)
        self._by_node = dict(by_node or {})
        self._windows = tuple(windows)
        self._assets = tuple(assets or ())
        self._flavors = {f.name: canonical_labels(f.node_labels) for f in flavors}
        self._by_model = {canonical_model(m): p for m, p in sorted((by_model or {}).items())}
        self._by_flavor = dict(by_flavor or {})
        self._nodes = self._describe(dcgm_models or {})
        # Answers kept per name: a join asks for each node's flavor and each GPU's model price,
        # and every answer walks all nodes or all allocations (10,000 nodes: minutes, not ms).
        self._flavor_nodes: dict[str, frozenset[str] | None] = {}
        self._models: dict[str, float | None] = {}
        self._charges: dict[frozenset[str] | None, float | None] = {}  # each walk of _charged

    def governed(self, by_node: Mapping[str, float]) -> GpuPrices:
        """The same prices with each node's GPU-hours at a governing price (a node -> price)."""
        windows, assets, flavors, dcgm_models, by_model, by_flavor = self._args
        return GpuPrices(
            windows,
            assets=assets,
            flavors=flavors,
            dcgm_models=dcgm_models,
            by_model=by_model,
            by_flavor=by_flavor,
            by_node=by_node,
        )

    def _describe(self, dcgm_models: Mapping[str, str]) -> dict[str, _Node]:
        names = {n.name for n in self._assets} | set(dcgm_models)
        for window in self._windows:
            names |= {a.node for a in window.allocations if a.node and a.gpu_hours > 0}
        labels = {n.name: canonical_labels(n.labels) for n in self._assets}
        out: dict[str, _Node] = {}
        for name in sorted(names):
            own = dict(labels.get(name, {}))
            if PRODUCT_LABEL not in own and name in dcgm_models:
                own[PRODUCT_LABEL] = _SEPARATORS.sub("-", dcgm_models[name].strip())
            model = own.get(PRODUCT_LABEL, "")
            out[name] = _Node(own, canonical_model(model) if model else "")
        return out

    @property
    def blended(self) -> float | None:
        """GPU cost / GPU-hours over the whole cluster: what OpenCost charged on average."""
        return self._charged(None)

    def flavor(self, name: str) -> float | None:
        """The GPU-hour price of a Kueue flavor, or None when nothing prices it."""
        if name in self._by_flavor:
            return self._by_flavor[name]
        return self._charged(self.flavor_nodes(name))

    def model(self, model: str) -> float | None:
        """The GPU-hour price of a GPU model: config first, else what its nodes were charged."""
        key = canonical_model(model)
        if key in self._by_model:
            return self._by_model[key]
        if key not in self._models:
            nodes = frozenset(n for n, node in self._nodes.items() if node.model == key)
            self._models[key] = self._charged(nodes) if nodes else None
        return self._models[key]

    def model_source(self, model: str) -> str | None:
        """Which rule priced a GPU model (CONFIGURED, CHARGED, ASSETS), None when none did."""
        key = canonical_model(model)
        if key in self._by_model:
            return CONFIGURED
        nodes = frozenset(n for n, node in self._nodes.items() if node.model == key)
        if nodes and all(n in self._by_node for n in nodes):
            return GOVERNED
        return self._source(nodes) if nodes else None

    def flavor_source(self, name: str) -> str | None:
        """Which rule priced a flavor (CONFIGURED, CHARGED, ASSETS), None when none did."""
        if name in self._by_flavor:
            return CONFIGURED
        return self._source(self.flavor_nodes(name))

    def _source(self, nodes: frozenset[str] | None) -> str | None:
        # The same walk as _charged, asking only which step answered.
        for window in self._windows:
            if any(a.gpu_hours > 0 for a in window.allocations if nodes is None or a.node in nodes):
                return CHARGED
        if any(a.gpu_hours > 0 for a in self._assets if nodes is None or a.name in nodes):
            return ASSETS
        return CONFIGURED if self._configured_only(nodes) is not None else None

    def flavor_nodes(self, name: str) -> frozenset[str] | None:
        """Nodes a flavor stands for; None means every node (no `nodeLabels`, or not listed)."""
        wanted = self._flavors.get(name)
        if not wanted:
            return None
        if name not in self._flavor_nodes:
            self._flavor_nodes[name] = frozenset(
                node
                for node, seen in self._nodes.items()
                if all(seen.labels.get(k) == v for k, v in wanted.items())
            )
        return self._flavor_nodes[name]

    def node_names(self) -> tuple[str, ...]:
        """Every node these records describe (assets, DCGM, allocations with GPU-hours), sorted."""
        return tuple(self._nodes)

    def node_model(self, node: str) -> str:
        """A node's canonical GPU model, "" when neither its labels nor DCGM name one."""
        seen = self._nodes.get(node)
        return seen.model if seen is not None else ""

    def flavor_of_node(self, node: str, candidates: Collection[str]) -> str | None:
        """The candidate flavor that selects a node most specifically (then by name), if any."""
        matching = []
        for flavor in sorted(candidates):
            nodes = self.flavor_nodes(flavor)
            if nodes is None or node in nodes:
                matching.append((-len(self._flavors.get(flavor, {})), flavor))
        return min(matching)[1] if matching else None

    def _override(self, node: str) -> float | None:
        if node in self._by_node:
            return self._by_node[node]
        seen = self._nodes.get(node)
        return self._by_model.get(seen.model) if seen is not None and seen.model else None

    def _charged(self, nodes: frozenset[str] | None) -> float | None:
        """GPU cost / GPU-hours on some nodes (None: all): allocations, else assets."""
        # The blended price and each flavor's are asked for by several steps of a join.
        if nodes not in self._charges:
            self._charges[nodes] = self._walked(nodes)
        return self._charges[nodes]

    def _walked(self, nodes: frozenset[str] | None) -> float | None:
        for window in self._windows:
            # Summed in the window's own order, so that the whole cluster's figure is
            # bit-for-bit the blended price the exporter has always charged.
            cost = hours = 0.0
            for a in window.allocations:
                if nodes is not None and a.node not in nodes:
                    continue
                price = self._override(a.node)
                cost += a.costs.get("gpu", 0.0) if price is None else price * a.gpu_hours
                hours += a.gpu_hours
            if hours > 0:
                return cost / hours
        return self._from_assets(nodes)

    def _from_assets(self, nodes: frozenset[str] | None) -> float | None:
        cost = hours = 0.0
        for asset in self._assets:
            if nodes is not None and asset.name not in nodes:
                continue
            price = self._override(asset.name)
            cost += asset.gpu_cost if price is None else price * asset.gpu_hours
            hours += asset.gpu_hours
        if hours > 0:
            return cost / hours
        return self._configured_only(nodes)

    def _configured_only(self, nodes: frozenset[str] | None) -> float | None:
        # No GPU-hours anywhere: configured model prices still price the flavor, GPU-weighted.
        weights: dict[float, float] = defaultdict(float)
        counts = {a.name: a.gpu_count for a in self._assets}
        for name in sorted(self._nodes if nodes is None else nodes):
            price = self._override(name)
            if price is None:
                return None
            weights[price] += counts.get(name, 1.0) or 1.0
        total = sum(weights.values())
        return sum(p * w for p, w in weights.items()) / total if total > 0 else None

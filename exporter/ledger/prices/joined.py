"""The GPU prices the join charges, by model and Kueue flavor, and Kueue's quota joined once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from exporter.config.schema import Config
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.gpus import PriceLookup, model_price
from exporter.ledger.costs.lending import lend
from exporter.ledger.costs.quota import TeamGpuQuota, gpu_quota_by_flavor
from exporter.ledger.costs.quota_charges import FlavorOf
from exporter.ledger.prices.applied import effective_prices
from exporter.ledger.prices.build import BuiltPrice
from exporter.ledger.prices.gpu import GpuPrices, canonical_model, node_models
from exporter.sources.kueue.records import KueueSnapshot
from exporter.sources.table import Snapshots

__all__ = [
    "GoverningPrices",
    "JoinedQuota",
    "governing_prices",
    "gpu_prices",
    "joined_quota",
    "node_flavor",
    "price_lookup",
    "prices_by_flavor",
]


@dataclass(frozen=True)
class JoinedQuota:
    """Kueue joined once per refresh: lending apportioned once, summed per team."""

    kueue: KueueSnapshot
    flavors: Mapping[str, TeamGpuQuota]  # GPU flavor -> quota per team
    lent: Mapping[tuple[str, str, str], float]


def gpu_prices(
    config: Config | None, latest: Snapshots, builds: tuple[BuiltPrice, ...] = ()
) -> GpuPrices | None:
    """GPU-hour prices per flavor and model from this refresh's latest, if OpenCost has any.

    Without a config, what OpenCost itself charged, with no price of ours over it.
    """
    opencost = latest.opencost
    if opencost is None:
        return None
    by_model, by_flavor = effective_prices(config, builds) if config is not None else ({}, {})
    return GpuPrices(
        (opencost.rate, opencost.month),
        assets=opencost.gpu_nodes,
        flavors=latest.kueue.flavors if latest.kueue is not None else (),
        dcgm_models=node_models(latest.dcgm.gpus) if latest.dcgm is not None else None,
        by_model=by_model,
        by_flavor=by_flavor,
    )


@dataclass(frozen=True)
class GoverningPrices:
    """The GPU-hour price the config governs per node, and per model for a node not described.

    Hashable, so a memo can tell one refresh's prices from the last one's.
    """

    nodes: tuple[tuple[str, float], ...]
    models: tuple[tuple[str, float], ...]
    _by_node: dict[str, float] = field(init=False, compare=False, hash=False, repr=False)
    _by_model: dict[str, float] = field(init=False, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_node", dict(self.nodes))
        object.__setattr__(self, "_by_model", dict(self.models))

    def price(self, node: str, model: str) -> float | None:
        """The governing price of a node, else of the model OpenCost says it ran, else None."""
        found = self._by_node.get(node)
        if found is None and model:
            found = self._by_model.get(canonical_model(model))
        return found


def governing_prices(
    config: Config,
    builds: tuple[BuiltPrice, ...],
    prices: GpuPrices | None,
    quota: JoinedQuota | None,
) -> GoverningPrices | None:
    """Each node's governing price: its GPU flavor's set or built price, else its model's.

    None when the config neither sets nor builds a GPU price: OpenCost's charge stands.
    """
    by_model, by_flavor = effective_prices(config, builds)
    if prices is None or not (by_model or by_flavor):
        return None
    models = {canonical_model(m): p for m, p in sorted(by_model.items())}
    flavors = sorted(quota.flavors) if quota is not None else []
    nodes: list[tuple[str, float]] = []
    for node in prices.node_names():
        chosen = prices.flavor_of_node(node, flavors) if flavors else None
        found = by_flavor.get(chosen) if chosen is not None else None
        found = models.get(prices.node_model(node)) if found is None else found
        if found is not None:
            nodes.append((node, found))
    return GoverningPrices(tuple(nodes), tuple(sorted(models.items())))


def price_lookup(
    config: Config, prices: GpuPrices | None, builds: tuple[BuiltPrice, ...]
) -> PriceLookup:
    """Waste's price of a GPU model: `gpu_prices` (or its build), else its nodes' OpenCost price,
    else blended."""
    configured = model_price(effective_prices(config, builds)[0])
    if prices is None:
        return configured
    blended = prices.blended

    def lookup(model: str) -> float | None:
        found = configured(model)
        found = prices.model(model) if found is None else found
        return blended if found is None else found

    return lookup


def prices_by_flavor(prices: GpuPrices | None, quota: JoinedQuota | None) -> dict[str, float]:
    """Each GPU flavor's price; one nothing prices takes the cluster's blended price."""
    if prices is None or quota is None:
        return {}
    out: dict[str, float] = {}
    for flavor in sorted(quota.flavors):
        price = prices.flavor(flavor)
        price = prices.blended if price is None else price
        if price is not None:
            out[flavor] = price
    return out


def node_flavor(prices: GpuPrices | None, quota: JoinedQuota) -> FlavorOf:
    """Which flavor a node's GPU-hours count against: the flavor that selects the node, else
    the team's flavor with the most nominal quota (a node no flavor selects is unlabelled)."""
    flavors = sorted(quota.flavors)

    def flavor_of(node: str, team: str) -> str | None:
        found = prices.flavor_of_node(node, flavors) if prices is not None else None
        if found is not None:
            return found
        held = [(-quota.flavors[f].nominal.get(team, 0.0), f) for f in flavors]
        return min(held)[1] if held else None

    return flavor_of


def joined_quota(kueue: KueueSnapshot | None, attributor: Attributor) -> JoinedQuota | None:
    """Kueue's quota per GPU flavor and team, lending apportioned once; None without Kueue."""
    if kueue is None:
        return None
    lent = lend(kueue.queues)
    return JoinedQuota(kueue, gpu_quota_by_flavor(kueue, attributor, lent), lent)

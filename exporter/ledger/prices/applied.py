"""The GPU-hour price applied per GPU model and per Kueue flavor, and where it came from (pure).

Sources, first that answers (the order GpuPrices and the join apply):

- `config`: a plain `gpu_prices` / `gpu_flavor_prices` entry (it overrides a build);
- `price_build`: `gpu_price_build` / `gpu_flavor_price_build` (exporter.ledger.prices.build);
- `opencost_charge`: what OpenCost charged per GPU-hour on the model's or flavor's nodes;
- `opencost_assets`: the same from OpenCost's node assets;
- `config_models`: a flavor whose nodes ran nothing, priced by its nodes' configured models;
- `flavor_price`: a model whose every node belongs to a flavor whose price the config sets or
  builds, at that price;
- `cluster_average`: nothing else prices it, so the cluster's blended price applies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from exporter.config.schema import Config
from exporter.gpu_names import canonical_model
from exporter.ledger.prices.build import FLAVOR, MODEL, BuiltPrice
from exporter.ledger.prices.gpu import ASSETS, CHARGED, CONFIGURED, GOVERNED, GpuPrices

__all__ = [
    "GOVERNING",
    "AppliedPrice",
    "applied_prices",
    "effective_prices",
    "opencost_charges",
]

CONFIG, BUILD, CONFIG_MODELS, AVERAGE = "config", "price_build", "config_models", "cluster_average"
# Sources of a price that governs: every GPU-hour it names is charged at it, not OpenCost's.
GOVERNING = frozenset({CONFIG, BUILD, GOVERNED})


@dataclass(frozen=True)
class AppliedPrice:
    """The GPU-hour price one GPU model or flavor is charged at, and its source."""

    kind: str  # model | flavor
    name: str
    price: float
    source: str


def effective_prices(
    config: Config, builds: Iterable[BuiltPrice]
) -> tuple[dict[str, float], dict[str, float]]:
    """Prices by model and by flavor: the builds', each overridden by a plain price."""
    plain = {canonical_model(m) for m in config.gpu_prices}
    by_model = {
        b.name: b.gpu_hour
        for b in builds
        if b.kind == MODEL and canonical_model(b.name) not in plain
    }
    by_flavor = {b.name: b.gpu_hour for b in builds if b.kind == FLAVOR}
    return {**by_model, **config.gpu_prices}, {**by_flavor, **config.gpu_flavor_prices}


def applied_prices(
    config: Config,
    prices: GpuPrices | None,
    builds: Iterable[BuiltPrice],
    models: Iterable[str],
    flavors: Mapping[str, float],
) -> tuple[AppliedPrice, ...]:
    """Every GPU model (seen by DCGM, or configured) and flavor (Kueue's GPU flavors, at the
    price the join charges them, or configured) with its price; one nothing prices is left out."""
    built = {(b.kind, canonical_model(b.name) if b.kind == MODEL else b.name) for b in builds}
    by_model, by_flavor = effective_prices(config, builds)
    names: dict[str, str] = {}
    for name in [*sorted(models), *sorted(by_model)]:
        names.setdefault(canonical_model(name), name)
    out: list[AppliedPrice] = []
    configured = {canonical_model(m): p for m, p in config.gpu_prices.items()}
    models_configured = {canonical_model(m): p for m, p in by_model.items()}
    for key, name in sorted(names.items()):
        if key in configured:
            out.append(AppliedPrice(MODEL, name, configured[key], CONFIG))
        elif key in models_configured:
            source = BUILD if (MODEL, key) in built else CONFIG
            out.append(AppliedPrice(MODEL, name, models_configured[key], source))
        else:
            found = _answer(prices, prices.model(name) if prices else None, _model_source, name)
            if found is not None:
                out.append(AppliedPrice(MODEL, name, *found))
    for flavor in sorted({*flavors, *by_flavor}):
        if flavor in config.gpu_flavor_prices:
            out.append(AppliedPrice(FLAVOR, flavor, config.gpu_flavor_prices[flavor], CONFIG))
        elif flavor in by_flavor:
            out.append(AppliedPrice(FLAVOR, flavor, by_flavor[flavor], BUILD))
        elif prices is not None and flavor in flavors:
            # The join's own price (blended when nothing else prices it): only its source is new.
            source = _SOURCES.get(prices.flavor_source(flavor) or "", AVERAGE)
            out.append(AppliedPrice(FLAVOR, flavor, flavors[flavor], source))
    return tuple(out)


def opencost_charges(
    applied: Iterable[AppliedPrice], own: GpuPrices | None
) -> tuple[AppliedPrice, ...]:
    """What OpenCost itself charged per GPU-hour for each model and flavor a price governs.

    `own` holds OpenCost's records with no price of ours over them; a name OpenCost charged
    nothing for is left out. The source is always `opencost_charge`.
    """
    if own is None:
        return ()
    out: list[AppliedPrice] = []
    for p in applied:
        if p.source not in GOVERNING:
            continue
        price = own.model(p.name) if p.kind == MODEL else own.flavor(p.name)
        if price is not None:
            out.append(AppliedPrice(p.kind, p.name, price, CHARGED))
    return tuple(out)


def _model_source(prices: GpuPrices, name: str) -> str | None:
    return prices.model_source(name)


_SOURCES: Mapping[str, str] = {
    CHARGED: CHARGED,
    ASSETS: ASSETS,
    CONFIGURED: CONFIG_MODELS,
    GOVERNED: GOVERNED,
}


def _answer(
    prices: GpuPrices | None,
    price: float | None,
    source_of: Callable[[GpuPrices, str], str | None],
    name: str,
) -> tuple[float, str] | None:
    """A price and its source from OpenCost's figures, else the cluster's blended price."""
    if prices is None:
        return None
    if price is not None:
        source = source_of(prices, name)
        return price, _SOURCES.get(source or "", AVERAGE)
    blended = prices.blended
    return None if blended is None else (blended, AVERAGE)

"""Unit economics of one join: prices applied and built, energy, cost per token, build or buy
(pure).

The join calls `price_builds` before it prices GPUs (a build is the price charged unless a plain
price overrides it) and `unit_economics` once it has the month's ledger window; each step's
maths lives in its own module.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from exporter.config.schema import Config
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.window import Window, serving_costs
from exporter.ledger.llm import Routed, serving_namespaces
from exporter.ledger.prices.applied import AppliedPrice, applied_prices, opencost_charges
from exporter.ledger.prices.build import (
    BuiltPrice,
    built_prices,
    measured_watts,
)
from exporter.ledger.prices.gpu import GpuPrices, node_models
from exporter.ledger.units.build_or_buy import (
    BreakEven,
    TeamAlternative,
    build_or_buy,
    namespace_utilisation,
)
from exporter.ledger.units.energy import TeamEnergy, team_energy
from exporter.ledger.units.tokens import (
    ModelTokenCost,
    TeamTokenCost,
    WeightOf,
    token_costs,
    weight_of,
)
from exporter.sources.table import Snapshots

__all__ = ["UnitEconomics", "price_builds", "unit_economics"]


@dataclass(frozen=True)
class UnitEconomics:
    """Every unit-economics figure of one join, typed, for the report and the statement."""

    prices: tuple[AppliedPrice, ...] = ()
    # What OpenCost itself charged for each model and flavor a config or built price governs.
    opencost_prices: tuple[AppliedPrice, ...] = ()
    builds: tuple[BuiltPrice, ...] = ()
    energy: tuple[TeamEnergy, ...] = ()
    models: tuple[ModelTokenCost, ...] = ()
    teams: tuple[TeamTokenCost, ...] = ()
    alternatives: tuple[TeamAlternative, ...] = ()
    break_even: tuple[BreakEven, ...] = ()


def price_builds(config: Config, latest: Snapshots) -> tuple[BuiltPrice, ...]:
    """The configured price builds, with measured watts where DCGM reports power."""
    if not config.gpu_price_build and not config.gpu_flavor_price_build:
        return ()
    gpus = latest.dcgm.gpus if latest.dcgm is not None else ()
    by_flavor: dict[str, float | None] = {}
    if config.gpu_flavor_price_build and gpus:
        by_flavor = _flavor_watts(config, latest)
    return built_prices(config, measured_watts(gpus), by_flavor)


def _flavor_watts(config: Config, latest: Snapshots) -> dict[str, float | None]:
    """Mean measured watts over the GPUs on each built flavor's nodes.

    None for a flavor one of whose GPUs had its power sample dropped: the mean is unknown.
    """
    assert latest.dcgm is not None
    opencost = latest.opencost
    nodes = GpuPrices(
        (),
        assets=opencost.gpu_nodes if opencost is not None else None,
        flavors=latest.kueue.flavors if latest.kueue is not None else (),
        dcgm_models=node_models(latest.dcgm.gpus),
    )
    out: dict[str, float | None] = {}
    for flavor in sorted(config.gpu_flavor_price_build):
        chosen = nodes.flavor_nodes(flavor)
        gpus = [r for r in latest.dcgm.gpus if chosen is None or r.node in chosen]
        found = measured_watts(gpus)
        means = [w for w in found.values() if w is not None]
        if len(means) < len(found):
            out[flavor] = None
        elif means:
            # A flavor's nodes hold one model in practice; several are averaged per GPU model.
            out[flavor] = sum(means) / len(means)
    return out


def unit_economics(
    config: Config,
    attributor: Attributor,
    latest: Snapshots,
    prices: GpuPrices | None,
    builds: tuple[BuiltPrice, ...],
    flavors: Mapping[str, float],
    routed: Routed | None,
    month: Window | None,
    weights: Mapping[str, float] | None = None,
    own: GpuPrices | None = None,
) -> UnitEconomics:
    """The unit-economics figures of one join (LLM ones need LiteLLM and the month's window)."""
    gpus = latest.dcgm.gpus if latest.dcgm is not None else ()
    models = {r.model for r in gpus if r.model}
    applied = applied_prices(config, prices, builds, models, flavors)
    charged = opencost_charges(applied, own)
    energy = team_energy(gpus, attributor, config) if latest.dcgm is not None else ()
    if routed is None:
        return UnitEconomics(applied, charged, builds, energy)
    serving = serving_costs(month.lines, serving_namespaces(config)) if month is not None else None
    model_costs, team_costs = _TOKENS.costs(routed, serving, weight_of(config, weights))
    alternatives, even = build_or_buy(config, model_costs, team_costs, namespace_utilisation(gpus))
    return UnitEconomics(
        applied, charged, builds, energy, model_costs, team_costs, alternatives, even
    )


_Costs = tuple[tuple[ModelTokenCost, ...], tuple[TeamTokenCost, ...]]


class _TokenMemo:
    """The last token costs, reused while the LiteLLM snapshot, the serving cost per namespace
    and the weights are the same: LiteLLM and OpenCost's month change every few minutes, the
    join runs at every source's refresh, and at a thousand teams by fifty models the token
    costs take a good part of a second."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: tuple[Routed, object, _Costs] | None = None

    def costs(
        self,
        routed: Routed,
        serving: Mapping[str, Mapping[str, float]] | None,
        weight_of: WeightOf,
    ) -> _Costs:
        """token_costs(routed, serving, weight_of), or the last answer when nothing changed."""
        models = sorted({record.model for record, _, _ in routed.rows})
        placed = None
        if serving is not None:
            placed = sorted((ns, sorted(teams.items())) for ns, teams in serving.items())
        key = (placed, [weight_of(m) for m in models])
        with self._lock:
            last = self._last
            if last is not None and last[0] is routed and last[1] == key:
                return last[2]
        found = token_costs(routed, serving, weight_of)
        with self._lock:
            self._last = (routed, key, found)
        return found


_TOKENS = _TokenMemo()

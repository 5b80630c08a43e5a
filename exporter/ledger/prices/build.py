"""GPU-hour prices built from their parts: owning the node, its energy, operating it (pure).

One node of `gpus` GPUs:

    capex per hour      = node_capex / (amortisation_years x 8,760 h x availability)
    energy per hour     = gpus x watts / 1,000 x PUE x energy price per kWh
    operations per hour = node_operations_per_hour
    node per hour       = the three added;  GPU-hour price = node per hour / gpus

Availability divides only the capex: the hardware is paid for every hour of its life but sells
only the hours it is up, while energy is drawn only while it runs. 140,000 over 4 years at 90 %
is 4.44 an hour; 4 x 700 W x 1.4 x 0.12 per kWh is 0.47; with 0.70 of operations a node costs
5.61 an hour and a GPU-hour 1.40.

With `power: measured`, the watts are the mean draw dcgm-exporter reports for the GPUs of that
model (of the flavor's nodes, for a flavor), over the refresh's GPUs; without any reading the
configured `gpu_watts` stands in, and without those the build has no price this refresh.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.config.schema import Config
from exporter.config.unit_economics import PowerBasis, PriceBuild
from exporter.gpu_names import canonical_model
from exporter.sources.dcgm.source import GpuRecord

__all__ = [
    "HOURS_PER_YEAR",
    "BuiltPrice",
    "build_price",
    "built_prices",
    "measured_watts",
]

HOURS_PER_YEAR = 8_760.0
MODEL, FLAVOR = "model", "flavor"


@dataclass(frozen=True)
class BuiltPrice:
    """A derived GPU-hour price and its parts, per node and hour."""

    kind: str  # model | flavor
    name: str  # the config's key
    gpus: int
    watts: float  # per GPU
    power: str  # nameplate | measured: where `watts` came from
    capex_per_hour: float
    energy_per_hour: float
    operations_per_hour: float

    @property
    def node_per_hour(self) -> float:
        """What one node costs an hour: owning, energy and operations."""
        return self.capex_per_hour + self.energy_per_hour + self.operations_per_hour

    @property
    def gpu_hour(self) -> float:
        """The GPU-hour price the build derives."""
        return self.node_per_hour / self.gpus

    @property
    def parts(self) -> dict[str, float]:
        """The node's hourly cost by part, in print order."""
        return {
            "capex": self.capex_per_hour,
            "energy": self.energy_per_hour,
            "operations": self.operations_per_hour,
        }


def build_price(
    kind: str, name: str, build: PriceBuild, measured: float | None = None
) -> BuiltPrice | None:
    """The price one build derives; None when it needs watts nothing gives."""
    watts, power = build.gpu_watts, PowerBasis.NAMEPLATE
    if build.power is PowerBasis.MEASURED and measured is not None:
        watts, power = measured, PowerBasis.MEASURED
    if watts is None:
        return None
    hours = build.amortisation_years * HOURS_PER_YEAR * build.availability
    energy = build.gpus_per_node * watts / 1_000.0 * build.pue * build.energy_price_per_kwh
    return BuiltPrice(
        kind,
        name,
        build.gpus_per_node,
        watts,
        power.value,
        build.node_capex / hours,
        energy,
        build.node_operations_per_hour,
    )


def measured_watts(records: Iterable[GpuRecord]) -> dict[str, float]:
    """Mean power draw per physical GPU, by canonical GPU model (GPUs that report it).

    A GPU is counted once however many pods share it (its records carry the whole GPU's draw).
    """
    seen: dict[tuple[str, str], tuple[str, float]] = {}
    for record in sorted(records, key=lambda r: (r.node, r.gpu, r.uuid)):
        if record.power_watts is not None and record.model:
            seen.setdefault((record.node, record.gpu), (record.model, record.power_watts))
    sums: dict[str, list[float]] = {}
    for model, watts in seen.values():
        acc = sums.setdefault(canonical_model(model), [0.0, 0.0])
        acc[0] += watts
        acc[1] += 1.0
    return {model: total / count for model, (total, count) in sorted(sums.items())}


def built_prices(
    config: Config,
    watts_by_model: Mapping[str, float],
    watts_by_flavor: Mapping[str, float] | None = None,
) -> tuple[BuiltPrice, ...]:
    """Every configured build that has watts, models first, each by name."""
    out: list[BuiltPrice] = []
    for name, build in sorted(config.gpu_price_build.items()):
        found = build_price(MODEL, name, build, watts_by_model.get(canonical_model(name)))
        if found is not None:
            out.append(found)
    by_flavor = watts_by_flavor or {}
    for name, build in sorted(config.gpu_flavor_price_build.items()):
        found = build_price(FLAVOR, name, build, by_flavor.get(name))
        if found is not None:
            out.append(found)
    return tuple(out)

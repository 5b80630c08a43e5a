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
model (of the flavor's nodes, for a flavor), over the refresh's GPUs. Where that mean cannot be
taken, the configured `gpu_watts` stands in and the build says why (`fallback`): `no_reading`, no
GPU of the model (or flavor) reports power; `sample_dropped`, one of them had its power sample
dropped this refresh, so the mean of the rest is not the model's draw. Without `gpu_watts` the
build has no price this refresh.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exporter.config.schema import Config
from exporter.config.unit_economics import PowerBasis, PriceBuild
from exporter.gpu_names import canonical_model
from exporter.sources.dcgm.records import GpuRecord

__all__ = [
    "HOURS_PER_YEAR",
    "NO_READING",
    "SAMPLE_DROPPED",
    "BuiltPrice",
    "build_price",
    "built_prices",
    "measured_watts",
]

HOURS_PER_YEAR = 8_760.0
MODEL, FLAVOR = "model", "flavor"
# Why a build that asks for measured power uses its nameplate instead.
NO_READING, SAMPLE_DROPPED = "no_reading", "sample_dropped"
# Measured watts per model or flavor: None when a GPU of it had its power sample dropped.
Watts = Mapping[str, float | None]


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
    fallback: str = ""  # why measured power was asked for and the nameplate used ("" if not)

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
    kind: str,
    name: str,
    build: PriceBuild,
    measured: float | None = None,
    *,
    dropped: bool = False,
) -> BuiltPrice | None:
    """The price one build derives; None when it needs watts nothing gives.

    `dropped`: a GPU the measured mean would cover had its sample dropped, so there is none.
    """
    watts, power, fallback = build.gpu_watts, PowerBasis.NAMEPLATE, ""
    if build.power is PowerBasis.MEASURED:
        if dropped:
            fallback = SAMPLE_DROPPED
        elif measured is None:
            fallback = NO_READING
        else:
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
        fallback,
    )


def measured_watts(records: Iterable[GpuRecord]) -> dict[str, float | None]:
    """Mean power draw per physical GPU, by canonical GPU model (GPUs that report it).

    A GPU is counted once however many pods share it (its records carry the whole GPU's draw).
    A model one of whose GPUs had its power sample dropped maps to None: its mean is unknown.
    """
    seen: dict[tuple[str, str], tuple[str, float]] = {}
    dropped: set[str] = set()
    for record in sorted(records, key=lambda r: (r.node, r.gpu, r.uuid)):
        if record.power_corrupt and record.model:
            dropped.add(canonical_model(record.model))
        elif record.power_watts is not None and record.model:
            seen.setdefault((record.node, record.gpu), (record.model, record.power_watts))
    sums: dict[str, list[float]] = {}
    for model, watts in seen.values():
        acc = sums.setdefault(canonical_model(model), [0.0, 0.0])
        acc[0] += watts
        acc[1] += 1.0
    means: dict[str, float | None] = {m: total / n for m, (total, n) in sums.items()}
    return dict(sorted({**means, **dict.fromkeys(dropped)}.items()))


def built_prices(
    config: Config,
    watts_by_model: Watts,
    watts_by_flavor: Watts | None = None,
) -> tuple[BuiltPrice, ...]:
    """Every configured build that has watts, models first, each by name."""
    out: list[BuiltPrice] = []
    for name, build in sorted(config.gpu_price_build.items()):
        found = _built(MODEL, name, build, watts_by_model, canonical_model(name))
        if found is not None:
            out.append(found)
    by_flavor = watts_by_flavor or {}
    for name, build in sorted(config.gpu_flavor_price_build.items()):
        found = _built(FLAVOR, name, build, by_flavor, name)
        if found is not None:
            out.append(found)
    return tuple(out)


def _built(kind: str, name: str, build: PriceBuild, watts: Watts, key: str) -> BuiltPrice | None:
    # A key present with None: a sample was dropped; absent: nothing reported power.
    dropped = key in watts and watts[key] is None
    return build_price(kind, name, build, watts.get(key), dropped=dropped)

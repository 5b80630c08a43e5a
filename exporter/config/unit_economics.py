"""Config for unit economics: GPU prices built from their parts, a model's bought alternative."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated

from pydantic import Field, model_validator

from exporter.config.types import MAX_GPU_HOUR, Price, StrictModel
from exporter.gpu_names import Issue, price_key_issues

__all__ = ["Alternative", "PowerBasis", "PriceBuild", "build_key_issues"]


class PowerBasis(StrEnum):
    """Where a price build's power comes from."""

    NAMEPLATE = "nameplate"  # `gpu_watts` as configured
    MEASURED = "measured"  # dcgm-exporter's power draw, falling back to `gpu_watts`


# Bounds far beyond any real node in any currency (a rack of 72 GPUs at USD 4 million is some
# 1e11 in the currencies with the most units per dollar): past them a figure is a slip, such as
# a price in the wrong unit or an exponent too many, and the products below could overflow.
_Capex = Annotated[float, Field(ge=0, le=1e13)]
_PerKwh = Annotated[float, Field(ge=0, le=1e6)]
_PerNodeHour = Annotated[float, Field(ge=0, le=1e8)]
_HOURS_PER_YEAR = 8_760


class PriceBuild(StrictModel):
    """A GPU-hour price derived from what one node costs to own and run.

    node per hour = capex / (years x 8,760 h x availability)          (owning)
                  + gpus x watts / 1,000 x PUE x tariff               (energy, while running)
                  + operations per hour;
    GPU-hour price = node per hour / gpus.
    """

    node_capex: _Capex
    gpus_per_node: Annotated[int, Field(ge=1, le=1024)]
    amortisation_years: Annotated[float, Field(gt=0, le=50)]
    availability: Annotated[float, Field(gt=0, le=1)] = 1.0
    gpu_watts: Annotated[float, Field(gt=0, le=10_000)] | None = None
    power: PowerBasis = PowerBasis.NAMEPLATE
    # 1.0 is no overhead at all; the least efficient data centres in surveys stay below 3.
    pue: Annotated[float, Field(ge=1, le=3)] = 1.0
    energy_price_per_kwh: _PerKwh = 0.0
    node_operations_per_hour: _PerNodeHour = 0.0

    @model_validator(mode="after")
    def _watts_when_nameplate(self) -> PriceBuild:
        if self.power is PowerBasis.NAMEPLATE and self.gpu_watts is None:
            raise ValueError("set gpu_watts, or power: measured to use dcgm-exporter's power draw")
        return self

    @model_validator(mode="after")
    def _plausible_price(self) -> PriceBuild:
        # Each part is bounded, but a tiny amortisation or availability still divides the
        # capex into an implausible price: judged like a configured GPU-hour price.
        price = self.fixed_gpu_hour + self.nameplate_energy_gpu_hour
        if price > MAX_GPU_HOUR:
            raise ValueError(
                f"builds {price:.3g} per GPU-hour, above {MAX_GPU_HOUR:,}: check node_capex, "
                "amortisation_years, availability and the other figures for a slip"
            )
        return self

    @property
    def fixed_gpu_hour(self) -> float:
        """Owning and operating one GPU for an hour, before energy."""
        hours = self.amortisation_years * _HOURS_PER_YEAR * self.availability
        return (self.node_capex / hours + self.node_operations_per_hour) / self.gpus_per_node

    @property
    def nameplate_energy_gpu_hour(self) -> float:
        """One GPU's energy for an hour at its nameplate watts (0 without them)."""
        watts = self.gpu_watts or 0.0
        return watts / 1000 * self.pue * self.energy_price_per_kwh


class Alternative(StrictModel):
    """What a self-hosted model's tokens would cost bought: an API's list prices per million
    input and output tokens, or a model the LiteLLM proxy prices (its spend over its tokens)."""

    input_per_million: Price | None = None
    output_per_million: Price | None = None
    litellm_model: Annotated[str, Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _one_way(self) -> Alternative:
        listed = (self.input_per_million, self.output_per_million)
        if self.litellm_model is not None:
            if any(p is not None for p in listed):
                raise ValueError("give either list prices or litellm_model, not both")
        elif any(p is None for p in listed):
            raise ValueError("give input_per_million and output_per_million, or litellm_model")
        return self


_RENAMED = {"gpu_prices": "gpu_price_build", "gpu_flavor_prices": "gpu_flavor_price_build"}


def build_key_issues(models: Iterable[str], flavors: Iterable[str]) -> list[Issue]:
    """Problems with the keys of `gpu_price_build` and `gpu_flavor_price_build` (the rules of
    `gpu_prices` and `gpu_flavor_prices`)."""

    def renamed(key: tuple[str | int, ...] | None) -> tuple[str | int, ...] | None:
        if key is None:
            return None
        return (_RENAMED.get(str(key[0]), key[0]), *key[1:])

    out: list[Issue] = []
    for key, message, other in price_key_issues(models, flavors):
        out.append((renamed(key) or key, message, renamed(other)))
    return out

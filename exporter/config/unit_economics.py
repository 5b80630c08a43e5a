"""Config for unit economics: GPU prices built from their parts, a model's bought alternative."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated

from pydantic import Field, model_validator

from exporter.config.types import Price, StrictModel
from exporter.gpu_names import Issue, price_key_issues

__all__ = ["Alternative", "PowerBasis", "PriceBuild", "build_key_issues"]


class PowerBasis(StrEnum):
    """Where a price build's power comes from."""

    NAMEPLATE = "nameplate"  # `gpu_watts` as configured
    MEASURED = "measured"  # dcgm-exporter's power draw, falling back to `gpu_watts`


class PriceBuild(StrictModel):
    """A GPU-hour price derived from what one node costs to own and run.

    node per hour = capex / (years x 8,760 h x availability)          (owning)
                  + gpus x watts / 1,000 x PUE x tariff               (energy, while running)
                  + operations per hour;
    GPU-hour price = node per hour / gpus.
    """

    node_capex: Price
    gpus_per_node: Annotated[int, Field(ge=1, le=1024)]
    amortisation_years: Annotated[float, Field(gt=0, le=50)]
    availability: Annotated[float, Field(gt=0, le=1)] = 1.0
    gpu_watts: Annotated[float, Field(gt=0, le=10_000)] | None = None
    power: PowerBasis = PowerBasis.NAMEPLATE
    pue: Annotated[float, Field(ge=1, le=5)] = 1.0
    energy_price_per_kwh: Price = 0.0
    node_operations_per_hour: Price = 0.0

    @model_validator(mode="after")
    def _watts_when_nameplate(self) -> PriceBuild:
        if self.power is PowerBasis.NAMEPLATE and self.gpu_watts is None:
            raise ValueError("set gpu_watts, or power: measured to use dcgm-exporter's power draw")
        return self


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

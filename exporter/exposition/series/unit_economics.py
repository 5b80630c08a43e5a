"""Unit-economics series: GPU prices applied and built, energy, cost per token, build or buy."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from exporter.exposition.catalogue.unit_economics import (
    GPU_PRICE_BUILD_PER_HOUR,
    GPU_PRICE_BUILD_POWER_FALLBACK,
    GPU_PRICE_BUILD_WATTS,
    GPU_PRICE_PER_HOUR,
    LLM_BREAK_EVEN_RATIO,
    LLM_BREAK_EVEN_UTILIZATION_RATIO,
    LLM_COST_PER_MILLION_TOKENS,
    TEAM_GPU_CO2E_GRAMS_PER_HOUR,
    TEAM_GPU_ENERGY_COST_PER_HOUR,
    TEAM_GPU_ENERGY_KWH_PER_HOUR,
    TEAM_GPU_POWER_WATTS,
    TEAM_LLM_ALTERNATIVE_COST_MONTH_TO_DATE,
    TEAM_LLM_COST_PER_MILLION_TOKENS,
    TEAM_LLM_COST_PER_REQUEST,
)
from exporter.exposition.samples import Sample
from exporter.exposition.series.model_fold import fold_alternatives, fold_token_costs
from exporter.ledger.prices.applied import AppliedPrice
from exporter.ledger.prices.build import BuiltPrice
from exporter.ledger.result import Chargeback
from exporter.ledger.units.build_or_buy import BreakEven, TeamAlternative
from exporter.ledger.units.economics import UnitEconomics
from exporter.ledger.units.energy import TeamEnergy
from exporter.ledger.units.tokens import ModelTokenCost, TeamTokenCost

__all__ = [
    "alternative_samples",
    "applied_price_samples",
    "break_even_samples",
    "build_or_buy_samples",
    "energy_samples",
    "model_series",
    "price_build_samples",
    "price_series",
    "series",
    "token_cost_samples",
    "unit_samples",
]


def series(chargeback: Chargeback) -> list[Sample]:
    """Every unit-economics figure of the join, models over the cap folded per team."""
    return [*price_series(chargeback), *model_series(chargeback)]


def price_series(chargeback: Chargeback) -> list[Sample]:
    """The prices applied and built, energy per team and each model's break-even: the unit
    figures DCGM's power and utilisation move."""
    units = chargeback.units
    return [
        *applied_price_samples(units.prices),
        *applied_price_samples(units.opencost_prices),
        *price_build_samples(units.builds),
        *energy_samples(units.energy),
        *break_even_samples(units.break_even),
    ]


def model_series(chargeback: Chargeback) -> list[Sample]:
    """Cost per token and the alternative per team and model, models over the cap folded."""
    units, llm = chargeback.units, chargeback.llm
    folded = frozenset(llm.folded_models if llm is not None else ())
    teams = fold_token_costs(units.teams, folded)
    alternatives = fold_alternatives(units.alternatives, folded)
    return [*token_cost_samples(units.models, teams), *alternative_samples(alternatives)]


def unit_samples(units: UnitEconomics, folded_models: Collection[str] = ()) -> list[Sample]:
    """Every unit-economics figure as samples; the team x model figures of `folded_models`
    summed per team under `__other__`."""
    folded = frozenset(folded_models)
    teams = fold_token_costs(units.teams, folded)
    alternatives = fold_alternatives(units.alternatives, folded)
    return [
        *applied_price_samples(units.prices),
        *applied_price_samples(units.opencost_prices),
        *price_build_samples(units.builds),
        *energy_samples(units.energy),
        *token_cost_samples(units.models, teams),
        *build_or_buy_samples(alternatives, units.break_even),
    ]


def applied_price_samples(applied: Iterable[AppliedPrice]) -> list[Sample]:
    """`chargeback_gpu_price_per_hour` per model and flavor."""
    return [
        Sample.of(GPU_PRICE_PER_HOUR, p.price, kind=p.kind, name=p.name, source=p.source)
        for p in applied
    ]


def price_build_samples(builds: Iterable[BuiltPrice]) -> list[Sample]:
    """Each build's parts per node and hour, the watts per GPU it used, and why not measured."""
    out: list[Sample] = []
    for b in builds:
        if b.fallback:
            labels = {"kind": b.kind, "name": b.name, "reason": b.fallback}
            out.append(Sample.of(GPU_PRICE_BUILD_POWER_FALLBACK, 1.0, **labels))
        for part, amount in b.parts.items():
            labels = {"kind": b.kind, "name": b.name, "part": part}
            out.append(Sample.of(GPU_PRICE_BUILD_PER_HOUR, amount, **labels))
        out.append(
            Sample.of(GPU_PRICE_BUILD_WATTS, b.watts, kind=b.kind, name=b.name, power=b.power)
        )
    return out


def energy_samples(energy: Iterable[TeamEnergy]) -> list[Sample]:
    """Power, energy, energy cost and emissions rates per team."""
    out: list[Sample] = []
    for e in energy:
        out.append(Sample.of(TEAM_GPU_POWER_WATTS, e.watts, team=e.team))
        out.append(Sample.of(TEAM_GPU_ENERGY_KWH_PER_HOUR, e.kwh_per_hour, team=e.team))
        if e.cost_per_hour is not None:
            out.append(Sample.of(TEAM_GPU_ENERGY_COST_PER_HOUR, e.cost_per_hour, team=e.team))
        if e.co2e_grams_per_hour is not None:
            out.append(Sample.of(TEAM_GPU_CO2E_GRAMS_PER_HOUR, e.co2e_grams_per_hour, team=e.team))
    return out


def token_cost_samples(
    models: Iterable[ModelTokenCost], teams: Iterable[TeamTokenCost]
) -> list[Sample]:
    """Cost per million tokens per model (declared, measured) and per team and model, and per
    request per team and model; a figure that is not known is left out."""
    out: list[Sample] = []
    for m in models:
        bases = (("declared", m.declared_per_million), ("measured", m.measured_per_million))
        for basis, value in bases:
            if value is not None:
                out.append(
                    Sample.of(LLM_COST_PER_MILLION_TOKENS, value, model=m.model, basis=basis)
                )
    for t in teams:
        if t.cost is None:
            continue
        million, request = t.per_million, t.per_request
        if million is not None:
            family = TEAM_LLM_COST_PER_MILLION_TOKENS
            out.append(Sample.of(family, million, team=t.team, model=t.model))
        if request is not None:
            out.append(Sample.of(TEAM_LLM_COST_PER_REQUEST, request, team=t.team, model=t.model))
    return out


def build_or_buy_samples(
    teams: Iterable[TeamAlternative], even: Iterable[BreakEven]
) -> list[Sample]:
    """Alternative cost per team and model, and each model's break-even."""
    return [*alternative_samples(teams), *break_even_samples(even)]


def alternative_samples(teams: Iterable[TeamAlternative]) -> list[Sample]:
    """Alternative cost per team and model."""
    family = TEAM_LLM_ALTERNATIVE_COST_MONTH_TO_DATE
    return [Sample.of(family, t.alternative, team=t.team, model=t.model) for t in teams]


def break_even_samples(even: Iterable[BreakEven]) -> list[Sample]:
    """Each model's break-even ratio and the serving GPUs' utilisation at it."""
    out: list[Sample] = []
    for b in even:
        if b.ratio is not None:
            out.append(Sample.of(LLM_BREAK_EVEN_RATIO, b.ratio, model=b.model))
        at = b.utilisation_at_break_even
        if at is not None:
            out.append(Sample.of(LLM_BREAK_EVEN_UTILIZATION_RATIO, at, model=b.model))
    return out

"""The report's unit-economics tables: GPU prices applied and built, energy, cost per million
tokens per team and model, build or buy; as JSON and as text cells.

Figures are the join's own (exporter.ledger.units.economics), never re-derived. Text prints money
per hour and per million tokens to the cent, a GPU-hour's price and a request's cost to four
decimals, a ratio to a tenth of a percent, never in scientific notation; JSON carries each
figure rounded as it is printed. Energy is the draw when the report ran, so
a closed month leaves it out, and the serving GPUs' utilisation (build or buy) with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from exporter.finance.report.figure_formats import TEXT, Formats
from exporter.finance.report.text_tables import UnitTable
from exporter.ledger.prices.applied import AppliedPrice
from exporter.ledger.units.economics import UnitEconomics

__all__ = ["as_of_report", "for_team", "unit_json", "unit_tables"]

_BUILD_HEAD = (
    *("kind", "name", "GPUs", "watts/GPU", "power"),
    *("capex", "energy", "operations", "node", "per GPU-hour"),
)
_EVEN_HEAD = (
    *("model", "alternative", "self-hosted", "bought"),
    *("ratio", "utilisation", "break-even utilisation"),
)


def _rounded(digits: int) -> Callable[[float | None], float | None]:
    # Halves to even, from the float's shortest repr: the rounding the printed figure had.
    quantum = Decimal(10) ** -digits

    def rounded(value: float | None) -> float | None:
        if value is None:
            return None
        return float(Decimal(repr(value)).quantize(quantum, ROUND_HALF_EVEN))

    return rounded


# JSON carries each figure to the digits it is printed with: money to the cent, a GPU-hour's
# price and a request's cost to four decimals, a ratio to a tenth of a percent.
_money = _rounded(2)
_fine = _rounded(4)
_plain = _rounded(2)
_ratio = _rounded(3)


def as_of_report(
    units: UnitEconomics, closed: bool, serving: Mapping[str, float] | None = None
) -> UnitEconomics:
    """The figures a report prints: a closed month's without what is measured when it runs
    (the GPUs' draw now, the serving GPUs' utilisation now), so it prints the same bytes later.
    `serving` is each self-hosted model's utilisation over the closed month, where history
    gives it (exporter.finance.report.gpu_month): build or buy then breaks even on it."""
    if not closed:
        return units
    month = serving or {}
    even = tuple(replace(b, utilisation=month.get(b.model)) for b in units.break_even)
    return replace(units, energy=(), break_even=even)


def unit_json(
    units: UnitEconomics, closed: bool = False, serving: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """Every unit-economics figure, for the report's JSON."""
    units = as_of_report(units, closed, serving)
    return {
        "gpu_prices": [
            {
                "kind": p.kind,
                "name": p.name,
                "price_per_gpu_hour": _fine(p.price),
                "source": p.source,
                # What OpenCost itself charged, where the applied price is not its own.
                "opencost_price_per_gpu_hour": _fine(_charged(units, p)),
            }
            for p in units.prices
        ],
        "gpu_price_builds": [
            {
                "kind": b.kind,
                "name": b.name,
                "gpus_per_node": b.gpus,
                "watts_per_gpu": _plain(b.watts),
                "power": b.power,
                "capex_per_node_hour": _money(b.capex_per_hour),
                "energy_per_node_hour": _money(b.energy_per_hour),
                "operations_per_node_hour": _money(b.operations_per_hour),
                "node_per_hour": _money(b.node_per_hour),
                "price_per_gpu_hour": _fine(b.gpu_hour),
            }
            for b in units.builds
        ],
        "gpu_energy_now": [
            {
                "team": e.team,
                "watts": _plain(e.watts),
                "kwh_per_hour": _plain(e.kwh_per_hour),
                "cost_per_hour": _money(e.cost_per_hour),
                "co2e_grams_per_hour": _plain(e.co2e_grams_per_hour),
            }
            for e in units.energy
        ],
        "llm_models": [
            {
                "model": m.model,
                "kind": m.kind,
                "tokens": m.tokens,
                "requests": m.requests,
                "declared_per_million_tokens": _money(m.declared_per_million),
                "measured_per_million_tokens": _money(m.measured_per_million),
                "measured_per_request": _fine(m.measured_per_request),
            }
            for m in units.models
        ],
        "llm_teams": [
            {
                "team": t.team,
                "model": t.model,
                "kind": t.kind,
                "tokens": t.tokens,
                "requests": t.requests,
                "cost": _money(t.cost),
                "per_million_tokens": _money(t.per_million),
                "per_request": _fine(t.per_request),
            }
            for t in units.teams
        ],
        "build_or_buy": {
            "teams": [
                {
                    "team": a.team,
                    "model": a.model,
                    "self_hosted": _money(a.self_hosted),
                    "alternative": _money(a.alternative),
                }
                for a in units.alternatives
            ],
            "models": [
                {
                    "model": b.model,
                    "alternative": b.alternative_name,
                    "self_hosted": _money(b.self_hosted),
                    "alternative_cost": _money(b.alternative),
                    "utilisation": _ratio(b.utilisation),
                    "break_even_ratio": _ratio(b.ratio),
                    "break_even_utilisation": _ratio(b.utilisation_at_break_even),
                }
                for b in units.break_even
            ],
        },
    }


def _charged(units: UnitEconomics, applied: AppliedPrice) -> float | None:
    """OpenCost's own charge beside a price that governs in its place, else None."""
    for p in units.opencost_prices:
        if (p.kind, p.name) == (applied.kind, applied.name):
            return p.price
    return None


def unit_tables(
    units: UnitEconomics,
    currency: str,
    closed: bool = False,
    f: Formats = TEXT,
    serving: Mapping[str, float] | None = None,
) -> list[UnitTable]:
    """The tables with rows, in print order (an empty one is left out)."""
    units = as_of_report(units, closed, serving)
    tables = [
        UnitTable(
            "gpu_prices",
            f"GPU-hour prices applied to every GPU-hour, used and idle ({currency} per GPU-hour)",
            ("kind", "name", "price", "governed by", "OpenCost charged"),
            tuple(
                (
                    f.word(p.kind),
                    p.name,
                    f.fine(p.price),
                    f.word(p.source),
                    f.fine(_charged(units, p)),
                )
                for p in units.prices
            ),
            2,
        ),
        UnitTable(
            "gpu_price_builds",
            f"GPU prices built from their parts ({currency} per node and hour)",
            _BUILD_HEAD,
            tuple(
                (
                    f.word(b.kind),
                    b.name,
                    f.count(b.gpus),
                    f.plain(b.watts),
                    f.word(b.power),
                    f.money(b.capex_per_hour),
                    f.money(b.energy_per_hour),
                    f.money(b.operations_per_hour),
                    f.money(b.node_per_hour),
                    f.fine(b.gpu_hour),
                )
                for b in units.builds
            ),
            2,
        ),
        UnitTable(
            "gpu_energy_now",
            f"GPU power and energy when the report ran (per hour; cost in {currency})",
            ("team", "watts", "kWh", "cost", "g CO2e"),
            tuple(
                (
                    f.team(e.team),
                    f.plain(e.watts),
                    f.plain(e.kwh_per_hour),
                    f.money(e.cost_per_hour),
                    f.plain(e.co2e_grams_per_hour),
                )
                for e in units.energy
            ),
            1,
        ),
        UnitTable(
            "llm_models",
            f"LLM cost per million tokens by model ({currency})",
            ("model", "kind", "tokens", "requests", "declared", "measured", "measured/request"),
            tuple(
                (
                    m.model,
                    f.word(m.kind),
                    f.count(m.tokens),
                    f.count(m.requests),
                    f.money(m.declared_per_million),
                    f.money(m.measured_per_million),
                    f.fine(m.measured_per_request),
                )
                for m in units.models
            ),
            2,
        ),
        UnitTable(
            "llm_teams",
            f"What each team paid per million tokens, by model ({currency})",
            ("team", "model", "kind", "tokens", "requests", "paid", "per million", "per request"),
            tuple(
                (
                    f.team(t.team),
                    t.model,
                    f.word(t.kind),
                    f.count(t.tokens),
                    f.count(t.requests),
                    f.money(t.cost),
                    f.money(t.per_million),
                    f.fine(t.per_request),
                )
                for t in units.teams
            ),
            3,
        ),
        UnitTable(
            "build_or_buy_teams",
            f"Build or buy: each team's self-hosted tokens bought instead ({currency})",
            ("team", "model", "self-hosted", "bought"),
            tuple(
                (f.team(a.team), a.model, f.money(a.self_hosted), f.money(a.alternative))
                for a in units.alternatives
            ),
            2,
        ),
        UnitTable(
            "build_or_buy_models",
            f"Build or buy: where self-hosting breaks even ({currency})",
            _EVEN_HEAD,
            tuple(
                (
                    b.model,
                    f.word(b.alternative_name),
                    f.money(b.self_hosted),
                    f.money(b.alternative),
                    f.ratio(b.ratio),
                    f.ratio(b.utilisation),
                    f.ratio(b.utilisation_at_break_even),
                )
                for b in units.break_even
            ),
            2,
        ),
    ]
    return [t for t in tables if t.rows]


def for_team(units: UnitEconomics, team: str) -> UnitEconomics:
    """Only the rows about one team (a team's statement shows no other team's figures)."""
    return replace(
        units,
        energy=tuple(e for e in units.energy if e.team == team),
        models=(),
        teams=tuple(t for t in units.teams if t.team == team),
        alternatives=tuple(a for a in units.alternatives if a.team == team),
        break_even=(),
    )

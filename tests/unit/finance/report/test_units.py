"""Unit economics in the report, hand-worked: the article's 5.61 a node, 1.40 a GPU-hour, 0.78."""

from __future__ import annotations

import json
import re

from exporter.config.unit_economics import PriceBuild
from exporter.finance.report.figures import Report, build_report
from exporter.finance.report.formats import format_report
from exporter.finance.report.units import unit_json, unit_tables
from exporter.ledger.costs.ledger import Ledger
from exporter.ledger.prices.applied import AppliedPrice
from exporter.ledger.prices.build import build_price
from exporter.ledger.units.build_or_buy import BreakEven, TeamAlternative
from exporter.ledger.units.economics import UnitEconomics
from exporter.ledger.units.energy import TeamEnergy
from exporter.ledger.units.tokens import ModelTokenCost, TeamTokenCost

H100 = "NVIDIA H100 80GB HBM3"
BUILD = build_price(
    "model",
    H100,
    PriceBuild(
        node_capex=140_000,
        gpus_per_node=4,
        amortisation_years=4,
        availability=0.9,
        gpu_watts=700,
        pue=1.4,
        energy_price_per_kwh=0.12,
        node_operations_per_hour=0.70,
    ),
)
assert BUILD is not None
# One hour of a 5.60 node serving 2,000 tokens a second: 7,200,000 tokens (5.4M prompt, 1.8M
# completion) in 3,600 requests. By hand: 5.60 / 7.2 = 0.7778 per million, 0.0016 a request.
# Bought at 2.50 / 10.00 per million: 5.4 x 2.50 + 1.8 x 10.00 = 13.50 + 18.00 = 31.50; the
# ratio 5.60 / 31.50 = 17.8 %, and at 40 % utilisation today it breaks even at 7.1 %.
UNITS = UnitEconomics(
    prices=(
        AppliedPrice("model", H100, BUILD.gpu_hour, "price_build"),
        AppliedPrice("flavor", "h100", 1.40, "opencost_charge"),
    ),
    # OpenCost charged 1.40 for the H100 whose build governs.
    opencost_prices=(AppliedPrice("model", H100, 1.40, "opencost_charge"),),
    builds=(BUILD,),
    # 4 x 700 W at PUE 1.4 = 3.92 kWh an hour, 0.4704 at 0.12, 980 g at 250 g a kWh.
    energy=(TeamEnergy("research", 2_800.0, 3.92, 0.4704, 980.0),),
    models=(ModelTokenCost("llama-3-70b", "self_hosted", 5_400_000, 1_800_000, 3_600, 2.88, 5.60),),
    teams=(
        TeamTokenCost("research", "llama-3-70b", "self_hosted", 5_400_000, 1_800_000, 3_600, 5.60),
        TeamTokenCost("vision", "gpt-4o", "external", 100_000, 20_000, 40, 0.65),
    ),
    alternatives=(TeamAlternative("research", "llama-3-70b", 5.60, 31.50),),
    break_even=(BreakEven("llama-3-70b", "list price", 5.60, 31.50, 0.40),),
)


def _report(closed: bool = False) -> Report:
    ledger = Ledger()
    ledger.add("research", "gpu", 5.60)
    return build_report(ledger, "EUR", "2026-11", {}, closed=closed, units=UNITS)


def test_every_figure_is_in_the_json() -> None:
    data = json.loads(format_report(_report(), "json"))["unit_economics"]
    assert data == unit_json(UNITS)
    (build,) = data["gpu_price_builds"]
    assert build["capex_per_node_hour"] == 4.44
    assert build["energy_per_node_hour"] == 0.47
    assert build["node_per_hour"] == 5.61
    # A GPU-hour's price to four decimals, as printed: 1.4024 is not 1.40.
    assert build["price_per_gpu_hour"] == 1.4024
    assert data["gpu_prices"][0] == {
        "kind": "model",
        "name": H100,
        "price_per_gpu_hour": 1.4024,
        "source": "price_build",
        "opencost_price_per_gpu_hour": 1.4,
    }
    assert data["gpu_prices"][1]["opencost_price_per_gpu_hour"] is None
    (model,) = data["llm_models"]
    # Each figure to the digits it is printed with (11.432873 was unrounded).
    assert model["measured_per_million_tokens"] == 0.78
    assert model["declared_per_million_tokens"] == 0.4
    assert model["measured_per_request"] == 0.0016
    research, vision = data["llm_teams"]
    assert (research["per_million_tokens"], research["per_request"]) == (0.78, 0.0016)
    # vision: 0.65 over 120,000 tokens = 5.416667 per million; 0.01625 a request, to four
    # decimals as the text prints it (halves to even).
    assert (vision["per_million_tokens"], vision["per_request"]) == (5.42, 0.0162)
    assert data["build_or_buy"]["models"][0]["break_even_ratio"] == 0.178
    assert data["build_or_buy"]["models"][0]["break_even_utilisation"] == 0.071
    assert data["gpu_energy_now"][0]["co2e_grams_per_hour"] == 980.0


def test_the_text_prints_them_for_people() -> None:
    text = format_report(_report(), "table")
    assert not re.search(r"\de[-+]\d", text.split("GPU-hour prices applied")[1])
    # Which price governed, to four decimals, beside what OpenCost charged.
    price = next(ln for ln in text.splitlines() if H100 in ln and "1.4024" in ln)
    assert "Built from its parts" in price and price.split()[-1] == "1.4000"
    build = next(ln for ln in text.splitlines() if "Nameplate" in ln)
    assert build.split()[-5:] == ["4.44", "0.47", "0.70", "5.61", "1.4024"]
    team_row = next(ln for ln in text.splitlines() if ln.startswith("research  llama"))
    assert team_row.split()[-5:] == ["7,200,000", "3,600", "5.60", "0.78", "0.0016"]
    even = next(ln for ln in text.splitlines() if ln.startswith("llama-3-70b  List price"))
    assert even.split()[-8:] == ["5.60", "31.50", "17.8", "%", "40.0", "%", "7.1", "%"]
    energy = next(ln for ln in text.splitlines() if ln.startswith("research") and "980" in ln)
    assert energy.split() == ["research", "2,800.00", "3.92", "0.47", "980.00"]


def test_a_closed_month_leaves_out_the_draw_of_today() -> None:
    closed = _report(closed=True)
    data = json.loads(format_report(closed, "json"))["unit_economics"]
    assert data["gpu_energy_now"] == []
    # Today's utilisation is no figure of a closed month; the cost ratio is.
    (even,) = data["build_or_buy"]["models"]
    assert even["utilisation"] is None and even["break_even_utilisation"] is None
    assert even["break_even_ratio"] == 0.178
    assert "GPU power and energy" not in format_report(closed, "table")
    assert [t.key for t in unit_tables(UNITS, "EUR", closed=True)][:2] == [
        "gpu_prices",
        "gpu_price_builds",
    ]

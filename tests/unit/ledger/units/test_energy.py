"""Measured power per team: energy at the wall, its cost at the build's tariff, and emissions."""

from __future__ import annotations

import pytest

from exporter.config.schema import Config
from exporter.exposition.series.unit_economics import energy_samples
from exporter.ledger.attribution import UNALLOCATED, Attributor
from exporter.ledger.units.energy import TeamEnergy, team_energy
from exporter.sources.dcgm.records import GpuRecord

H100, L40S = "NVIDIA H100 80GB HBM3", "NVIDIA L40S"
CONFIG = Config.model_validate(
    {
        "teams": [{"name": "a", "namespaces": ["ns-a"]}, {"name": "b", "namespaces": ["ns-b"]}],
        "grid_co2e_grams_per_kwh": 200,
        "gpu_price_build": {
            "nvidia-l40s": {
                "node_capex": 1,
                "gpus_per_node": 4,
                "amortisation_years": 1,
                "gpu_watts": 350,
                "pue": 1.5,
                "energy_price_per_kwh": 0.20,
            }
        },
    }
)


def test_power_energy_cost_and_emissions_worked_by_hand() -> None:
    records = [
        GpuRecord("n1", "0", "u0", H100, namespace="ns-a", pod="p", power_watts=500.0),
        # One L40S time-sliced between a and b: 300 W, half each.
        GpuRecord("n2", "0", "u1", L40S, namespace="ns-a", pod="q", share=0.5, power_watts=300.0),
        GpuRecord("n2", "0", "u1", L40S, namespace="ns-b", pod="r", share=0.5, power_watts=300.0),
        GpuRecord("n2", "1", "u2", L40S, power_watts=60.0),
        GpuRecord("n2", "2", "u3", L40S, namespace="ns-b", pod="s"),  # reports no power
    ]
    energy = {e.team: e for e in team_energy(records, Attributor(CONFIG), CONFIG)}
    # a: 500 W of H100 (no build: PUE 1, no tariff) + 150 W of L40S (PUE 1.5, 0.20 a kWh).
    # kWh an hour: 0.5 + 0.15 x 1.5 = 0.725; cost unknown (the H100 has no tariff);
    # CO2e: 0.725 x 200 = 145 g an hour.
    a = energy["a"]
    assert a.watts == pytest.approx(650.0) and a.kwh_per_hour == pytest.approx(0.725)
    assert a.cost_per_hour is None
    assert a.co2e_grams_per_hour == pytest.approx(145.0)
    # b: 150 W of L40S: 0.225 kWh an hour, 0.045 an hour, 45 g.
    b = energy["b"]
    assert b.kwh_per_hour == pytest.approx(0.225)
    assert b.cost_per_hour == pytest.approx(0.045)
    assert b.co2e_grams_per_hour == pytest.approx(45.0)
    # The unallocated L40S: 60 W x 1.5 = 0.09 kWh an hour.
    assert energy[UNALLOCATED].kwh_per_hour == pytest.approx(0.09)
    families = {s.family.base for s in energy_samples(energy.values())}
    assert "team_gpu_energy_cost_per_hour" in families


def test_without_grid_intensity_no_emissions() -> None:
    plain = CONFIG.model_copy(update={"grid_co2e_grams_per_kwh": None})
    records = [GpuRecord("n1", "0", "u0", H100, namespace="ns-a", pod="p", power_watts=100.0)]
    (only,) = team_energy(records, Attributor(plain), plain)
    assert only.co2e_grams_per_hour is None
    samples = energy_samples([TeamEnergy("a", 100.0, 0.1, None, None)])
    assert {s.family.base for s in samples} == {
        "team_gpu_power_watts",
        "team_gpu_energy_kwh_per_hour",
    }


@pytest.mark.parametrize("reason", ["non_finite", "out_of_range", "missing_field"])
def test_a_dropped_power_sample_leaves_its_team_unknown_not_lower(reason: str) -> None:
    records = [
        GpuRecord("n1", "0", "u0", H100, namespace="ns-a", pod="p", power_watts=500.0),
        GpuRecord("n1", "1", "u1", H100, namespace="ns-a", pod="q", power_corrupt=reason),
        GpuRecord("n1", "2", "u2", H100, namespace="ns-b", pod="r", power_watts=400.0),
        GpuRecord("n1", "3", "u3", H100, power_corrupt=reason),  # nobody holds it
    ]
    energy = {e.team: e for e in team_energy(records, Attributor(CONFIG), CONFIG)}
    # a's 500 W would read as its draw with its other GPU's missing: a has no figure at all.
    assert set(energy) == {"b"}
    assert energy["b"].watts == pytest.approx(400.0)

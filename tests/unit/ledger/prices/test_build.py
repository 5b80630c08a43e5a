"""GPU prices built from their parts: the article's 4 x H100 node, measured watts, and samples."""

from __future__ import annotations

import pytest

from exporter.config.schema import Config
from exporter.config.unit_economics import PowerBasis, PriceBuild
from exporter.exposition.series.unit_economics import price_build_samples
from exporter.ledger.prices.build import (
    NO_READING,
    SAMPLE_DROPPED,
    BuiltPrice,
    build_price,
    built_prices,
    measured_watts,
)
from exporter.sources.dcgm.records import GpuRecord

H100 = "NVIDIA H100 80GB HBM3"
# The article: 140,000 over 4 years at 90 %, 4 x 700 W x PUE 1.4 x 0.12 per kWh, 0.70 of ops.
ARTICLE = PriceBuild(
    node_capex=140_000,
    gpus_per_node=4,
    amortisation_years=4,
    availability=0.9,
    gpu_watts=700,
    pue=1.4,
    energy_price_per_kwh=0.12,
    node_operations_per_hour=0.70,
)


def test_the_articles_node_costs_5_61_an_hour_and_a_gpu_hour_1_40() -> None:
    built = build_price("model", H100, ARTICLE)
    assert built is not None
    # By hand: 140,000 / (4 x 8,760 x 0.9) = 140,000 / 31,536 = 4.4394;
    # 4 x 0.7 kW x 1.4 x 0.12 = 0.4704; + 0.70 = 5.6098 a node, / 4 = 1.4025 a GPU-hour.
    assert built.capex_per_hour == pytest.approx(140_000 / 31_536)
    assert built.capex_per_hour == pytest.approx(4.44, abs=0.005)
    assert built.energy_per_hour == pytest.approx(0.4704)
    assert built.operations_per_hour == 0.70
    assert built.node_per_hour == pytest.approx(5.61, abs=0.01)
    assert built.gpu_hour == pytest.approx(1.40, abs=0.01)
    assert built.power == "nameplate" and built.watts == 700


def test_measured_power_replaces_the_nameplate_only_when_asked_and_read() -> None:
    measured = ARTICLE.model_copy(update={"power": PowerBasis.MEASURED})
    built = build_price("model", H100, measured, 350.0)
    assert built is not None and built.power == "measured" and built.watts == 350.0
    assert built.energy_per_hour == pytest.approx(4 * 0.35 * 1.4 * 0.12)
    assert built.fallback == ""
    # Nothing read: the nameplate stands in, and says why.
    fallback = build_price("model", H100, measured, None)
    assert fallback is not None and fallback.power == "nameplate" and fallback.watts == 700
    assert fallback.fallback == NO_READING
    # A sample dropped: whatever the rest read, the nameplate stands in.
    dropped = build_price("model", H100, measured, 350.0, dropped=True)
    assert dropped is not None and (dropped.watts, dropped.fallback) == (700, SAMPLE_DROPPED)
    # A nameplate build ignores a reading, and falls back from nothing.
    plain = build_price("model", H100, ARTICLE, 350.0, dropped=True)
    assert plain is not None and plain.watts == 700 and plain.fallback == ""
    # Measured without a nameplate or a reading: no price this refresh.
    bare = PriceBuild(
        node_capex=1, gpus_per_node=1, amortisation_years=1, power=PowerBasis.MEASURED
    )
    assert build_price("model", H100, bare, None) is None


def test_measured_watts_count_a_shared_gpu_once_per_model() -> None:
    records = [
        GpuRecord("n1", "0", "u0", H100, pod="a", share=0.5, power_watts=600.0),
        GpuRecord("n1", "0", "u0", H100, pod="b", share=0.5, power_watts=600.0),
        GpuRecord("n1", "1", "u1", H100, power_watts=100.0),
        GpuRecord("n2", "0", "u2", "NVIDIA A100", power_watts=None),
    ]
    assert measured_watts(records) == {"nvidia-h100-80gb-hbm3": 350.0}


@pytest.mark.parametrize("reason", ["non_finite", "out_of_range", "missing_field"])
def test_a_dropped_power_sample_makes_its_models_mean_unknown_not_lower(reason: str) -> None:
    # The mean of what was left would be 600 W where the model draws more, or less: unknown.
    records = [
        GpuRecord("n1", "0", "u0", H100, pod="a", power_watts=600.0),
        GpuRecord("n1", "1", "u1", H100, power_corrupt=reason),
        GpuRecord("n2", "0", "u2", "NVIDIA L40S", power_watts=300.0),
    ]
    watts = measured_watts(records)
    assert watts == {"nvidia-h100-80gb-hbm3": None, "nvidia-l40s": 300.0}
    measured = ARTICLE.model_copy(update={"power": PowerBasis.MEASURED})
    config = Config.model_validate(
        {"gpu_price_build": {H100: measured.model_dump(), "NVIDIA L40S": measured.model_dump()}}
    )
    builds = {b.name: b for b in built_prices(config, watts)}
    assert (builds[H100].watts, builds[H100].power, builds[H100].fallback) == (
        700,
        "nameplate",
        SAMPLE_DROPPED,
    )
    assert (builds["NVIDIA L40S"].watts, builds["NVIDIA L40S"].fallback) == (300.0, "")
    values = {(s.family.base, s.labels): s.value for s in price_build_samples(builds.values())}
    reasons = {k[1] for k in values if k[0] == "gpu_price_build_power_fallback"}
    assert reasons == {(("kind", "model"), ("name", H100), ("reason", SAMPLE_DROPPED))}


def test_builds_by_model_and_flavor_and_their_samples() -> None:
    config = Config.model_validate(
        {
            "gpu_price_build": {H100: ARTICLE.model_dump()},
            "gpu_flavor_price_build": {"h100": ARTICLE.model_dump()},
        }
    )
    builds = built_prices(config, {}, {})
    assert [(b.kind, b.name) for b in builds] == [("model", H100), ("flavor", "h100")]
    values = {(s.family.base, s.labels): s.value for s in price_build_samples(builds[:1])}
    labels = (("kind", "model"), ("name", H100))
    assert values[("gpu_price_build_per_hour", (*labels, ("part", "capex")))] == pytest.approx(
        4.4394, abs=1e-4
    )
    assert values[("gpu_price_build_per_hour", (*labels, ("part", "energy")))] == pytest.approx(
        0.4704
    )
    assert values[("gpu_price_build_watts", (*labels, ("power", "nameplate")))] == 700


def test_parts_add_up_to_the_node() -> None:
    built = BuiltPrice("model", H100, 4, 700, "nameplate", 4.0, 0.5, 0.7)
    assert sum(built.parts.values()) == built.node_per_hour == pytest.approx(5.2)
    assert built.gpu_hour == pytest.approx(1.3)

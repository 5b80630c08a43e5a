"""The GPU-hour price applied per model and flavor and its source, through the join."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import IdlePolicy
from exporter.exposition.series import series
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs.cluster import gpu_money
from exporter.ledger.join import join
from exporter.ledger.prices.applied import effective_prices
from exporter.ledger.prices.build import BuiltPrice
from exporter.sources.dcgm.records import DcgmSnapshot, GpuRecord
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import FIXED_NOW
from tests.support.properties import examples
from tests.unit.ledger.prices.test_gpu import H100, L40S, _config, _records

# An L40S node: 52,560 over 2 years at full availability = 3.00 an hour; 4 x 350 W x PUE 1 x
# 0.20 = 0.28; operations 0.28: 3.56 a node, 0.89 a GPU-hour.
L40S_BUILD = {
    "node_capex": 52_560,
    "gpus_per_node": 4,
    "amortisation_years": 2,
    "gpu_watts": 350,
    "energy_price_per_kwh": 0.20,
    "node_operations_per_hour": 0.28,
}


def _with_dcgm() -> Snapshots:
    records = _records()
    gpus = (
        GpuRecord("node-h", "0", "uh", H100, namespace="ns-a", pod="p", power_watts=600.0),
        GpuRecord("node-l", "0", "ul", L40S, namespace="ns-b", pod="q", power_watts=250.0),
    )
    return Snapshots(opencost=records.opencost, kueue=records.kueue, dcgm=DcgmSnapshot(gpus))


def test_each_price_and_where_it_came_from() -> None:
    config = _config(
        IdlePolicy.SEPARATE,
        gpu_flavor_prices={"h100": 2.50},
        gpu_price_build={L40S: L40S_BUILD},
    )
    result = join(config, Attributor(config), _with_dcgm(), Reading.open(FIXED_NOW, config.zone))
    applied = {(p.kind, p.name): p for p in result.units.prices}
    # H100: node-h is the h100 flavor's, whose 2.50 governs every GPU-hour there; OpenCost's
    # own charge (4.20 / 2 GPU-hours) is shown beside it.
    h100 = applied[("model", H100)]
    assert h100.price == pytest.approx(2.50) and h100.source == "flavor_price"
    charged = {(p.kind, p.name): p for p in result.units.opencost_prices}
    assert charged[("model", H100)].price == pytest.approx(2.10)
    assert charged[("flavor", "h100")].price == pytest.approx(2.10)
    assert charged[("model", L40S)].price == pytest.approx(0.90)
    assert {p.source for p in charged.values()} == {"opencost_charge"}
    # L40S: the build, 0.89, charged in place of OpenCost's 0.90.
    assert applied[("model", L40S)].source == "price_build"
    assert applied[("model", L40S)].price == pytest.approx(0.89)
    # The h100 flavor: the plain price; the l40s flavor: node-l's GPU-hours at the build's price.
    assert (applied[("flavor", "h100")].price, applied[("flavor", "h100")].source) == (
        2.50,
        "config",
    )
    assert applied[("flavor", "l40s")].price == pytest.approx(0.89)
    assert applied[("flavor", "l40s")].source == "opencost_charge"
    (build,) = result.units.builds
    assert build.node_per_hour == pytest.approx(3.56)
    served = {(s.family.base, s.labels) for s in series(result)}
    labels = (("kind", "model"), ("name", L40S), ("source", "price_build"))
    assert ("gpu_price_per_hour", labels) in served


def test_a_plain_price_overrides_a_build_of_the_same_model() -> None:
    config = _config(
        IdlePolicy.SEPARATE,
        gpu_prices={"nvidia-l40s": 1.00},
        gpu_price_build={L40S: L40S_BUILD},
    )
    build = BuiltPrice("model", L40S, 4, 350, "nameplate", 3.0, 0.28, 0.28)
    by_model, by_flavor = effective_prices(config, [build])
    assert by_model == {"nvidia-l40s": 1.00} and by_flavor == {}
    result = join(config, Attributor(config), _with_dcgm(), Reading.open(FIXED_NOW, config.zone))
    applied = {(p.kind, p.name): p for p in result.units.prices}
    assert (applied[("model", L40S)].price, applied[("model", L40S)].source) == (1.00, "config")


def test_without_opencost_only_configured_prices_show() -> None:
    config = _config(IdlePolicy.SEPARATE, gpu_price_build={L40S: L40S_BUILD})
    records = Snapshots(dcgm=_with_dcgm().dcgm)
    result = join(config, Attributor(config), records, Reading.open(FIXED_NOW, config.zone))
    assert [(p.name, p.source) for p in result.units.prices] == [(L40S, "price_build")]
    # Measured power still reaches the teams.
    assert {e.team for e in result.units.energy} == {"a", "b"}


@settings(max_examples=examples(25), deadline=None)
@given(
    st.floats(1_000, 1_000_000),
    st.integers(1, 8),
    st.floats(0.5, 8),
    st.floats(0.1, 1.0),
    st.floats(50, 1_500),
    st.sampled_from(list(IdlePolicy)),
)
def test_a_built_price_moves_money_between_teams_never_creates_it(
    capex: float, gpus: int, years: float, availability: float, watts: float, policy: IdlePolicy
) -> None:
    build = {
        "node_capex": capex,
        "gpus_per_node": gpus,
        "amortisation_years": years,
        "availability": availability,
        "gpu_watts": watts,
        "pue": 1.3,
        "energy_price_per_kwh": 0.15,
        "node_operations_per_hour": 0.5,
    }
    config = _config(policy, gpu_price_build={H100: build}, gpu_flavor_price_build={"l40s": build})
    result = join(config, Attributor(config), _with_dcgm(), Reading.open(FIXED_NOW, config.zone))
    assert result.month is not None and result.hourly is not None
    records = _records().opencost
    assert records is not None and result.cluster is not None
    charge = result.cluster.gpu_charge
    assert charge is not None
    # Conserved at the applied prices: the policies share out exactly the cluster's cost,
    # which is OpenCost's for everything but GPUs, and every GPU-hour at its governing price.
    assert result.month.total() == pytest.approx(result.cluster.month_total, rel=1e-9)
    assert result.hourly.total() == pytest.approx(result.cluster.per_hour, rel=1e-9)
    besides_gpu = records.month.total() - gpu_money(records.month)
    assert result.cluster.month_total - charge.applied_month == pytest.approx(besides_gpu)
    assert charge.opencost_month == pytest.approx(gpu_money(records.month))
    # No row is negative because of a price: only `lent` credits a team.
    assert all(v >= -1e-9 for (_, c), v in result.month.costs.items() if c != "lent")

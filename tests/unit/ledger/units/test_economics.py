"""Price builds with measured power (a flavor's watts: its nodes' GPUs' mean draw); token memo."""

from __future__ import annotations

import pytest

from exporter.config.schema import IdlePolicy
from exporter.ledger.llm import route
from exporter.ledger.units.economics import _TokenMemo, price_builds
from tests.unit.ledger.prices.test_applied import _with_dcgm
from tests.unit.ledger.prices.test_gpu import H100, _config
from tests.unit.ledger.units.test_tokens import ATTRIBUTOR, MODELS, _usage

MEASURED = {
    "node_capex": 87_600,
    "gpus_per_node": 4,
    "amortisation_years": 1,
    "power": "measured",
    "energy_price_per_kwh": 0.25,
}


def test_measured_watts_by_model_and_by_flavor() -> None:
    config = _config(
        IdlePolicy.SEPARATE,
        gpu_price_build={H100: MEASURED},
        gpu_flavor_price_build={"l40s": MEASURED, "h100": {**MEASURED, "gpu_watts": 700}},
    )
    builds = {(b.kind, b.name): b for b in price_builds(config, _with_dcgm())}
    # The H100 on node-h draws 600 W: 87,600 / 8,760 = 10.00 an hour, energy 4 x 0.6 x 0.25
    # = 0.60: 10.60 a node, 2.65 a GPU-hour.
    model = builds[("model", H100)]
    assert (model.watts, model.power) == (600.0, "measured")
    assert model.gpu_hour == pytest.approx(2.65)
    # The l40s flavor selects node-l, whose L40S draws 250 W; the h100 flavor node-h's 600 W.
    assert builds[("flavor", "l40s")].watts == 250.0
    assert builds[("flavor", "h100")].watts == 600.0


def test_no_builds_no_work() -> None:
    assert price_builds(_config(IdlePolicy.SEPARATE), _with_dcgm()) == ()


def test_token_costs_are_reused_while_nothing_changed() -> None:
    memo = _TokenMemo()
    routed = route(_usage(), MODELS, ATTRIBUTOR)
    first = memo.costs(routed, {"ns-serving": {"search": 120.0}}, lambda _m: 3.0)
    assert memo.costs(routed, {"ns-serving": {"search": 120.0}}, lambda _m: 3.0) is first
    # A new serving cost, a new weight or a new snapshot is worked out again.
    assert memo.costs(routed, {"ns-serving": {"search": 130.0}}, lambda _m: 3.0) is not first
    again = memo.costs(routed, {"ns-serving": {"search": 130.0}}, lambda _m: 2.0)
    research = {t.team: t.cost for t in again[1] if t.model == "llama-3-70b"}["research"]
    # w = 2: research 600k + 400k = 1.0M of 1.2M weighted: 130 x 1.0 / 1.2 = 108.33.
    assert research == pytest.approx(108.333, abs=1e-3)
    _, teams = memo.costs(route(_usage(), MODELS, ATTRIBUTOR), None, lambda _m: 2.0)
    assert [t.cost for t in teams if t.kind == "self_hosted"] == [None, None]

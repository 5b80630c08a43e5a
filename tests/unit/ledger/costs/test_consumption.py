"""The month's consumption, worked by hand: quantities, resource weights, served and external."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from exporter.config.schema import Config, IdlePolicy
from exporter.ledger.attribution import OTHER, Attributor
from exporter.ledger.costs.consumption import NO_RESOURCE, consumption
from exporter.ledger.costs.policies import idle_rule
from exporter.ledger.costs.window import window
from exporter.ledger.llm import ModelPricing, TeamModelUsage
from exporter.sources.opencost.snapshot import AllocationSet
from exporter.sources.opencost.source import parse_allocation_response

START, END = datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 2, tzinfo=UTC)
CONFIG = Config.model_validate(
    {"teams": [{"name": "a", "namespaces": ["ns-a"]}, {"name": "b", "namespaces": ["ns-b"]}]}
)


def _allocation(ns: str, gpu_model: str | None, **fields: float) -> dict[str, Any]:
    gpu = {"gpuModel": gpu_model} if gpu_model is not None else None
    return {"properties": {"namespace": ns, "node": "n1"}, "gpuAllocation": gpu, **fields}


def _month() -> Any:
    data = {
        "n1/ns-a/train": _allocation("ns-a", "H100", gpuCost=28.0, gpuHours=20, cpuCoreHours=8),
        "n1/ns-a/eval": _allocation("ns-a", None, gpuCost=1.4, gpuHours=1),
        "n1/ns-b/serve": _allocation("ns-b", "L40S", gpuCost=10.0, gpuHours=10, cpuCoreHours=2),
    }
    allocations, idle = parse_allocation_response({"code": 200, "data": [data]})
    whole = AllocationSet(START, END, allocations, idle)
    rule = idle_rule(IdlePolicy.SEPARATE)
    return window(whole, Attributor(CONFIG), rule, False, live=False, llm_scale=1.0)


USAGE = {
    ("a", "llama"): TeamModelUsage(None, 1_000, 100, 5),  # served: weighted 1,000 + 4 x 100
    ("b", "gpt-4o"): TeamModelUsage(3.5, 200, 50, 1),  # external: LiteLLM's spend
}
PRICING = (ModelPricing("llama", None, 0.01, 0.01, 0.04, 4.0),)


def test_quantities_and_resource_weights_by_hand() -> None:
    used = consumption(_month(), USAGE, PRICING, {"llama"}, 2.0)
    assert used.quantities == pytest.approx(
        {
            ("a", "gpu"): 21.0,
            ("b", "gpu"): 10.0,
            ("a", "cpu"): 8.0,
            ("b", "cpu"): 2.0,
            ("a", "llm_serving"): 1_100.0,
            ("b", "llm_external"): 250.0,
        }
    )
    assert used.resource_costs == pytest.approx(
        {
            ("a", "gpu", "H100"): 28.0,
            ("a", "gpu", NO_RESOURCE): 1.4,  # a GPU without a model
            ("b", "gpu", "L40S"): 10.0,
            ("a", "llm_serving", "llama"): 0.01 * 1_400,  # the model's own weight, 4
            ("b", "llm_external", "gpt-4o"): 3.5,
        }
    )
    assert used.resource_quantities[("a", "gpu", "H100")] == 20.0
    assert used.resource_quantities[("b", "llm_external", "gpt-4o")] == 250.0


def test_a_folded_team_counts_under_other() -> None:
    used = consumption(_month(), USAGE, PRICING, {"llama"}, 2.0, frozenset({"b"}))
    assert {team for team, _ in used.quantities} == {"a", OTHER}
    assert used.resource_costs[(OTHER, "gpu", "L40S")] == 10.0


def test_a_model_not_served_is_external_even_without_spend() -> None:
    usage = {("a", "mystery"): TeamModelUsage(None, 10, 0, 1)}
    used = consumption(_month(), usage, (), {"llama"}, 2.0)
    assert used.resource_costs[("a", "llm_external", "mystery")] == 0.0
    assert used.quantities[("a", "llm_external")] == 10.0

"""Dimensions and shared costs in the join: the worked example of docs/dimensions.md, by hand."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any, TypeVar

import pytest

from exporter.calendar import month_start
from exporter.config.schema import Config
from exporter.exposition.series import series
from exporter.ledger.attribution import Attributor
from exporter.ledger.join import join
from exporter.sources.litellm.snapshot import LiteLLMSnapshot, ModelUsage
from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.snapshot import AllocationSet, OpenCostSnapshot
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import FIXED_NOW

K = TypeVar("K")

# The config of the worked example, as docs/dimensions.md shows it.
EXAMPLE: dict[str, Any] = {
    "idle_policy": "proportional",
    "teams": [{"name": "search", "namespaces": ["ns-search"]}, {"name": "vision"}],
    "llm_models": [{"model": "gpt-4o", "external": True}],
    "dimensions": [
        {
            "name": "product",
            "label_keys": ["producto"],
            "annotation_keys": ["finops.io/product"],
            "litellm_tag_prefix": "product:",
        },
        {"name": "environment", "label_keys": ["entorno"], "namespace_label_keys": ["env"]},
    ],
    "shared_costs": {"namespaces": ["monitoring"], "rule": "proportional"},
}


def _allocation(
    ns: str,
    name: str,
    costs: dict[str, float],
    labels: dict[str, str] | None = None,
    ns_labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Allocation:
    full = {c: costs.get(c, 0.0) for c in ("gpu", "cpu", "ram", "storage", "network", "other")}
    return Allocation(
        f"node/{ns}/{name}",
        ns,
        "node",
        labels or {},
        ns_labels or {},
        full,
        0.0,
        annotations=annotations or {},
    )


def _example_records() -> Snapshots:
    allocations = (
        # search's model server: product by its own label, environment by its namespace's.
        _allocation(
            "ns-search", "vllm", {"gpu": 600, "cpu": 100}, {"producto": "chat"}, {"env": "prod"}
        ),
        # vision is known by label; its product only by annotation; its environment label wins
        # over what the namespace says.
        _allocation(
            "ns-vision",
            "detector",
            {"gpu": 200, "cpu": 100},
            {"team": "vision", "entorno": "staging"},
            {"env": "dev"},
            {"finops_io_product": "inspection"},
        ),
        # Every team's monitoring: shared.
        _allocation("monitoring", "prometheus", {"cpu": 90}),
        # Nobody's notebook.
        _allocation("sandbox", "notebook", {"cpu": 10}),
    )
    start = month_start(FIXED_NOW, Config.model_validate(EXAMPLE).zone)
    month = AllocationSet(start, FIXED_NOW, allocations, {"gpu": 80.0})
    rate = AllocationSet(FIXED_NOW - timedelta(hours=1), FIXED_NOW, allocations, {"gpu": 80.0})
    usage = (
        ModelUsage("search", None, "gpt-4o", 40.0, 1000, 100, 10),
        ModelUsage("vision", None, "gpt-4o", 80.0, 2000, 200, 20),
    )
    tags = {"product:chat": 30.0, "product:inspection": 60.0, "env:prod": 5.0}
    # The tags' API-key breakdowns name the teams: search asked for chat, vision inspection.
    team_tags = {
        ("search", "product:chat"): 30.0,
        ("vision", "product:inspection"): 60.0,
        ("vision", "env:prod"): 5.0,
    }
    llm = LiteLLMSnapshot((), usage, tags=tags, team_tags=team_tags)
    return Snapshots(opencost=OpenCostSnapshot(rate, month), litellm=llm)


def _rounded(costs: Mapping[K, float]) -> dict[K, float]:
    return {k: round(v, 9) for k, v in costs.items() if round(v, 9)}


def test_the_worked_example_figure_by_figure() -> None:
    config = Config.model_validate(EXAMPLE)
    result = join(
        config, Attributor(config), _example_records(), Reading.open(FIXED_NOW, config.zone)
    )
    assert result.month is not None
    # Idle GPU (80) is shared by GPU use: search 600 -> 60, vision 200 -> 20. Monitoring's 90
    # is spread by each team's own cost: search 700 + 60 + 40 = 800, vision 300 + 20 + 80 = 400,
    # so 60 and 30. The notebook's 10 stays unallocated and takes no shared cost.
    assert _rounded(result.month.costs) == {
        ("search", "gpu"): 600.0,
        ("search", "cpu"): 100.0,
        ("search", "idle_share"): 60.0,
        ("search", "llm_external"): 40.0,
        ("search", "shared"): 60.0,
        ("vision", "gpu"): 200.0,
        ("vision", "cpu"): 100.0,
        ("vision", "idle_share"): 20.0,
        ("vision", "llm_external"): 80.0,
        ("vision", "shared"): 30.0,
        ("__unallocated__", "cpu"): 10.0,
    }
    product, environment = result.dimensions
    # LLM: search's tags explain 30 of its 40 (chat), the other 10 follow its workload (chat);
    # vision's explain 60 of its 80 (inspection), the other 20 its workload (inspection).
    assert _rounded(product.month.costs) == {
        ("chat", "gpu"): 600.0,
        ("chat", "cpu"): 100.0,
        ("chat", "idle_share"): 60.0,
        ("chat", "llm_external"): 40.0,
        ("chat", "shared"): 60.0,
        ("inspection", "gpu"): 200.0,
        ("inspection", "cpu"): 100.0,
        ("inspection", "idle_share"): 20.0,
        ("inspection", "llm_external"): 80.0,
        ("inspection", "shared"): 30.0,
        ("__unallocated__", "cpu"): 10.0,
    }
    assert _rounded(environment.month.by_value()) == {
        "prod": 860.0,
        "staging": 430.0,
        "__unallocated__": 10.0,
    }
    # Every split adds up to the cluster: 700 + 300 + 90 + 10 + 80 idle + 120 LLM = 1300.
    for split in result.dimensions:
        assert split.month.total() == pytest.approx(1300.0)
    assert result.month.total() == pytest.approx(1300.0)


def test_the_example_is_served_as_dimension_series() -> None:
    config = Config.model_validate(EXAMPLE)
    result = join(
        config, Attributor(config), _example_records(), Reading.open(FIXED_NOW, config.zone)
    )
    month = {
        (dict(s.labels)["dimension"], dict(s.labels)["value"], dict(s.labels)["component"]): s.value
        for s in series(result)
        if s.family.base == "dimension_cost_month_to_date"
    }
    assert month[("environment", "staging", "shared")] == pytest.approx(30.0)
    over = [s.value for s in series(result) if s.family.base == "dimension_values_over_cap"]
    assert over == [0.0, 0.0]

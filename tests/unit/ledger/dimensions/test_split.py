"""Dimensions conserve money: every dimension adds up to the team split under every policy."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exporter.config.dimensions import DimensionConfig
from exporter.config.schema import Config, IdlePolicy
from exporter.ledger.attribution import IDLE, OTHER, UNALLOCATED, Attributor, Placement
from exporter.ledger.costs.ledger import CostLine, Ledger
from exporter.ledger.dimensions.split import (
    DimensionCosts,
    DimensionResolver,
    LlmTags,
    cap_values,
    split_ledger,
    tag_values,
)
from exporter.ledger.join import join
from exporter.sources.opencost.records import Allocation
from exporter.sources.opencost.snapshot import AllocationSet
from exporter.sources.reading import Reading
from exporter.sources.table import Snapshots
from tests.conftest import FIXED_NOW
from tests.support.bounded_snapshots import bounded_snapshots, demo_config
from tests.support.properties import examples

VALUES = ("rag", "chat", "Search Bot", "", "__idle__")
TAGS = ("product:rag", "product:x", "unrelated")
KEYS = ("producto", "product", "finops_io_product", "env", "unrelated")
SHARED_RULES: tuple[dict[str, Any] | None, ...] = (
    None,
    {"namespaces": ["ns-nobody"], "rule": "proportional"},
    {"namespaces": ["ns-search"], "teams": ["vision"], "rule": "even"},
    {"namespaces": ["ns-nobody"], "rule": "fixed", "weights": {"research": 3, "search": 1}},
)


DIMENSIONS = [
    {
        "name": "product",
        "label_keys": ["producto", "product"],
        "annotation_keys": ["finops.io/product"],
        "litellm_tag_prefix": "product:",
        "max_values": 2,
    },
    {"name": "environment", "namespace_label_keys": ["env"], "fallback_label_keys": ["env"]},
]


def _config(policy: IdlePolicy, by_node: bool, shared: dict[str, Any] | None) -> Config:
    return demo_config(policy, by_node, shared_costs=shared, dimensions=DIMENSIONS)


labels = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)


@st.composite
def labelled(draw: st.DrawFn, window: AllocationSet) -> AllocationSet:
    allocations = tuple(
        msgspec.structs.replace(
            a,
            labels={**draw(labels), **a.labels},
            namespace_labels=draw(labels),
            annotations=draw(labels),
            namespace_annotations=draw(labels),
        )
        for a in window.allocations
    )
    return AllocationSet(window.start, window.end, allocations, window.idle, window.node_costs)


@pytest.mark.parametrize("policy", list(IdlePolicy))
@pytest.mark.parametrize("shared", SHARED_RULES)
@settings(
    max_examples=examples(12),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_every_dimension_adds_up_to_the_team_split(
    policy: IdlePolicy, shared: dict[str, Any] | None, data: st.DataObject
) -> None:
    by_node = data.draw(st.booleans())
    config = _config(policy, by_node, shared)
    bundle = data.draw(bounded_snapshots(with_llm=data.draw(st.booleans())))
    assert bundle.opencost is not None
    opencost = replace(
        bundle.opencost,
        rate=data.draw(labelled(bundle.opencost.rate)),
        month=data.draw(labelled(bundle.opencost.month)),
    )
    llm = bundle.litellm
    if llm is not None:
        tags = data.draw(st.dictionaries(st.sampled_from(TAGS), st.floats(0, 1e6)))
        llm = replace(llm, tags=tags)
    bundle = Snapshots(opencost, bundle.dcgm, bundle.kueue, llm)
    result = join(config, Attributor(config), bundle, Reading.open(FIXED_NOW, config.zone))
    assert result.month is not None and result.hourly is not None
    assert [d.name for d in result.dimensions] == ["product", "environment"]
    for split in result.dimensions:
        for ledger, costs in ((result.month, split.month), (result.hourly, split.hourly)):
            scale = math.fsum(abs(v) for v in ledger.costs.values())
            assert costs.total() == pytest.approx(ledger.total(), abs=1e-9 * scale + 1e-9)
            assert all(math.isfinite(v) for v in costs.costs.values())
        # And each team row is split whole: the per-team figures add up to the team's row.
        # Within the month's own scale (the loop above ends on the hourly ledger's).
        month_scale = math.fsum(abs(v) for v in result.month.costs.values())
        uncapped = result.month.by_team() if not result.folded_teams else {}
        for team, row in uncapped.items():
            mine = sum(v for (t, _, _), v in split.month.by_team.items() if t == team)
            assert mine == pytest.approx(sum(row.values()), abs=1e-9 * month_scale + 1e-9)
        named = {v for v, _ in split.month.costs if not v.startswith("__")}
        assert len(named) <= (2 if split.name == "product" else 50)
    # Shared rows never stay: their money is on the teams as `shared`.
    assert not any(team == "__shared__" for team, _ in result.month.costs)


def _line(team: str, costs: dict[str, float]) -> CostLine:
    return CostLine(Placement(team, "label"), "n", costs)


def test_a_team_row_is_split_by_its_own_workloads_values() -> None:
    ledger = Ledger({("a", "gpu"): 10.0, ("a", "idle_share"): 4.0, (IDLE, "cpu"): 1.0})
    lines = [_line("a", {"gpu": 3.0}), _line("a", {"gpu": 1.0, "cpu": 4.0})]
    split = split_ledger("product", ledger, lines, ["rag", "chat"])
    assert split.costs == {
        ("chat", "gpu"): 2.5,
        ("rag", "gpu"): 7.5,
        # idle_share has no line of its own: the team's whole cost by value, 3 : 5.
        ("chat", "idle_share"): 2.5,
        ("rag", "idle_share"): 1.5,
        (IDLE, "cpu"): 1.0,
    }


def test_a_team_no_workload_explains_is_unallocated() -> None:
    split = split_ledger("product", Ledger({("llm-only", "llm_external"): 5.0}), [], [])
    assert split.costs == {(UNALLOCATED, "llm_external"): 5.0}


def test_tags_place_the_tagged_share_of_llm_spend() -> None:
    ledger = Ledger({("a", "llm_external"): 8.0, ("b", "llm_serving"): -2.0})
    lines = [_line("a", {"cpu": 1.0}), _line("b", {"cpu": 1.0})]
    proxy = LlmTags({"product:rag": 3.0, "product:chat": 1.0, "env:x": 9.0}, 8.0)
    split = split_ledger("product", ledger, lines, ["mine", "theirs"], proxy, "product:")
    # Half the proxy's spend is tagged: 4 by tags (3 : 1), 4 by the team's workloads.
    assert split.costs == {
        ("rag", "llm_external"): 3.0,
        ("chat", "llm_external"): 1.0,
        ("mine", "llm_external"): 4.0,
        # A serving team's credit is not anyone's request: it follows the team.
        ("theirs", "llm_serving"): -2.0,
    }


def test_a_teams_own_tags_place_its_llm_spend_when_the_proxy_names_teams() -> None:
    ledger = Ledger({("a", "llm_external"): 8.0, ("b", "llm_external"): 2.0})
    lines = [_line("a", {"cpu": 1.0}), _line("b", {"cpu": 1.0})]
    tags = LlmTags(
        {"product:rag": 6.0, "product:chat": 1.0},
        10.0,
        {"a": {"product:rag": 6.0}, "b": {"product:chat": 1.0}},
        {"a": 8.0, "b": 2.0},
    )
    split = split_ledger("product", ledger, lines, ["mine", "theirs"], tags, "product:")
    assert split.costs == {
        ("rag", "llm_external"): 6.0,
        ("mine", "llm_external"): 2.0,
        ("chat", "llm_external"): 1.0,
        ("theirs", "llm_external"): 1.0,
    }


def test_tag_values_take_the_prefix_and_normalise() -> None:
    spend = {"product:RAG": 2.0, "product:rag": 1.0, "product:": 5.0, "env:prod": 9.0}
    assert tag_values(spend, "product:") == {"rag": 3.0}
    assert tag_values(spend, None) == {}


def _one_team(costs: dict[tuple[str, str], float]) -> DimensionCosts:
    by_team = {("t", value, component): v for (value, component), v in costs.items()}
    return DimensionCosts("p", costs, by_team)


def test_cap_folds_the_cheapest_values_and_the_rate_follows() -> None:
    month = _one_team(
        {("a", "gpu"): 5.0, ("b", "gpu"): 3.0, ("c", "cpu"): 1.0, (UNALLOCATED, "gpu"): 0.5}
    )
    capped, folded = cap_values(month, 1)
    assert folded == ["b", "c"]
    assert capped.costs == {
        ("a", "gpu"): 5.0,
        (OTHER, "gpu"): 3.0,
        (OTHER, "cpu"): 1.0,
        (UNALLOCATED, "gpu"): 0.5,
    }
    assert capped.by_team[("t", OTHER, "gpu")] == 3.0
    # The rate keeps what the month kept: b folded there, d is not in the month at all.
    rate, _ = cap_values(
        _one_team({("a", "gpu"): 1.0, ("b", "gpu"): 1.0, ("d", "gpu"): 1.0}), 1, {"a"}
    )
    assert rate.costs == {("a", "gpu"): 1.0, (OTHER, "gpu"): 2.0}


def test_resolution_follows_the_team_precedence() -> None:
    resolver = DimensionResolver(
        DimensionConfig(
            name="product",
            label_keys=("producto",),
            annotation_keys=("finops.io/product",),
            namespace_label_keys=("product",),
            namespace_annotation_keys=("finops.io/product",),
            fallback_label_keys=("app",),
        )
    )

    def value(
        labels: dict[str, str],
        namespace_labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        namespace_annotations: dict[str, str] | None = None,
    ) -> str:
        allocation = Allocation(
            "x",
            "ns",
            "n",
            labels,
            namespace_labels or {},
            {},
            0.0,
            annotations=annotations or {},
            namespace_annotations=namespace_annotations or {},
        )
        return resolver.value(allocation)

    ns = {"product": "from-ns"}
    assert value({"label_producto": "Own"}, ns) == "own"
    assert value({}, ns, annotations={"finops_io_product": "noted"}) == "noted"
    assert value({"app": "fallback"}, ns) == "from-ns"
    assert value({}, namespace_annotations={"finops.io/product": "ns-note"}) == "ns-note"
    assert value({"app": "web"}) == "web"
    assert value({"producto": "__idle__"}) == UNALLOCATED

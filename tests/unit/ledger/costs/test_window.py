"""From OpenCost JSON to ledgers: per-node idle split, and no dependence on JSON key order."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import Config, IdlePolicy
from exporter.ledger.attribution import Attributor
from exporter.ledger.costs import window as costs
from exporter.ledger.costs.policies import IdleRule, idle_rule
from exporter.ledger.costs.window import gpu_price_per_hour, idle_groups, serving_costs
from exporter.sources.opencost.snapshot import AllocationSet
from exporter.sources.opencost.source import parse_allocation_response
from tests.support.properties import examples

NOW = datetime(2026, 11, 15, 12, tzinfo=UTC)
SEPARATE = idle_rule(IdlePolicy.SEPARATE)
PROPORTIONAL = idle_rule(IdlePolicy.PROPORTIONAL)
CONFIG = Config.model_validate(
    {
        "teams": [{"name": "a", "namespaces": ["ns-a"]}, {"name": "b"}],
        "attribution": {"team_label_keys": ["team"], "fallback_label_keys": ["part-of"]},
    }
)


def _alloc(i: int, ns: str, node: str, labels: dict[str, str], gpu: float, cpu: float) -> Any:
    return {
        "name": f"{node}/{ns}/deployment:w{i}",
        "properties": {"namespace": ns, "node": node, "labels": labels},
        "gpuCost": gpu,
        "cpuCost": cpu,
        "ramCost": cpu / 2,
        "gpuHours": gpu / 1.4,
    }


allocations = st.lists(
    st.builds(
        _alloc,
        st.integers(0, 10_000),
        st.sampled_from(["ns-a", "ns-b", "ns-x"]),
        st.sampled_from(["n1", "n2"]),
        st.dictionaries(
            st.sampled_from(["team", "part-of", "app"]), st.sampled_from(["a", "b", "z"])
        ),
        st.floats(0, 100),
        st.floats(0, 10),
    ),
    max_size=20,
    unique_by=lambda a: a["name"],
)


@settings(max_examples=examples(150))
@given(
    allocations,
    st.floats(0, 500),
    st.sampled_from([SEPARATE, PROPORTIONAL]),
    st.randoms(),
)
def test_ledger_does_not_depend_on_json_key_order(
    allocs: list[Any], idle_gpu: float, rule: IdleRule, rnd: random.Random
) -> None:
    def body(order: list[Any]) -> dict[str, Any]:
        data = {a["name"]: dict(a) for a in order}
        data["__idle__"] = {"gpuCost": idle_gpu, "cpuCost": 1.0, "ramCost": 0.5}
        items = list(data.items())
        rnd.shuffle(items)
        for _, a in items:
            if "properties" in a:
                labels = list(a["properties"]["labels"].items())
                rnd.shuffle(labels)
                a["properties"] = {**a["properties"], "labels": dict(labels)}
        return {"code": 200, "data": [dict(items)]}

    def ledger(order: list[Any]) -> dict[tuple[str, str], float]:
        parsed, idle = parse_allocation_response(body(order))
        window = AllocationSet(NOW - timedelta(hours=1), NOW, parsed, idle)
        return costs.window(
            window, Attributor(CONFIG), rule, False, live=False, llm_scale=1.0
        ).ledger.costs

    expected = ledger(allocs)
    shuffled = list(allocs)
    rnd.shuffle(shuffled)
    got = ledger(shuffled)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-12)


def _window(node_costs: dict[str, dict[str, float]]) -> AllocationSet:
    parsed, idle = parse_allocation_response(
        {
            "code": 200,
            "data": [
                {
                    "x1": _alloc(1, "ns-a", "n1", {}, 2.8, 1.0),
                    "x2": _alloc(2, "ns-b", "n2", {"team": "b"}, 0.0, 3.0),
                    "__idle__": {"gpuCost": 8.4, "cpuCost": 4.0, "ramCost": 0.0},
                }
            ],
        }
    )
    return AllocationSet(NOW - timedelta(hours=2), NOW, parsed, idle, node_costs)


def test_idle_is_split_by_each_nodes_own_idle() -> None:
    window = _window(
        {"n1": {"gpu": 5.6, "cpu": 2.0, "ram": 0.0}, "n2": {"gpu": 8.4, "cpu": 6.0, "ram": 0.0}}
    )
    lines = costs.window(
        window, Attributor(CONFIG), PROPORTIONAL, True, live=False, llm_scale=1.0
    ).lines
    groups = idle_groups(window, lines, by_node=True)
    # node idle: n1 gpu 5.6-2.8=2.8, n2 gpu 8.4-0=8.4 -> 8.4 reported idle split 1:3
    assert groups["n1"]["gpu"] == pytest.approx(2.1)
    assert groups["n2"]["gpu"] == pytest.approx(6.3)
    # cpu: n1 2-1=1, n2 6-3=3 -> 4.0 split 1:3
    assert groups["n1"]["cpu"] == pytest.approx(1.0)
    assert groups["n2"]["cpu"] == pytest.approx(3.0)
    ledger = costs.window(
        window, Attributor(CONFIG), PROPORTIONAL, True, live=False, llm_scale=1.0
    ).ledger
    # GPU idle on n2 has no GPU user there, so it stays idle even though n1 has one.
    assert ledger.costs[("__idle__", "gpu")] == pytest.approx(6.3)
    assert ledger.total() == pytest.approx(window.total())


def test_without_node_costs_idle_is_cluster_wide() -> None:
    window = _window({})
    assert idle_groups(window, [], by_node=True) == {"": {"gpu": 8.4, "cpu": 4.0, "ram": 0.0}}


def test_gpu_price_and_serving_costs() -> None:
    window = _window({})
    assert gpu_price_per_hour(window) == pytest.approx(1.4)
    lines = costs.window(
        window, Attributor(CONFIG), SEPARATE, False, live=False, llm_scale=1.0
    ).lines
    assert serving_costs(lines, ["ns-b"]) == {"ns-b": {"b": pytest.approx(4.5)}}


def test_window_memo_reuses_the_windows_of_the_same_sets_and_equals_a_fresh_build() -> None:
    memo, attributor = costs.WindowMemo(), Attributor(CONFIG)
    first, other = _window({}), _window({})
    for live in (True, False):
        got = memo.window(first, attributor, SEPARATE, False, live=live, llm_scale=0.5)
        again = memo.window(first, attributor, SEPARATE, False, live=live, llm_scale=0.25)
        fresh = costs.window(first, attributor, SEPARATE, False, live=live, llm_scale=0.25)
        assert again.lines is got.lines  # placed and charged once
        assert (again.ledger, again.llm_scale) == (fresh.ledger, 0.25)
        # Each join gets a ledger of its own: a step that changes one leaves the memo's alone.
        again.ledger.add("a", "gpu", 1.0)
        assert memo.window(first, attributor, SEPARATE, False, live=live, llm_scale=1).ledger == (
            fresh.ledger
        )
        # Another set (equal, not the same), or another rule, is built again.
        assert memo.window(
            other, attributor, SEPARATE, False, live=live, llm_scale=1
        ).lines is not (got.lines)
        assert memo.window(other, attributor, PROPORTIONAL, False, live=live, llm_scale=1).lines


@pytest.mark.parametrize("rule", [SEPARATE, PROPORTIONAL])
def test_the_rate_and_month_windows_of_one_set_are_charged_once_and_equal_fresh_builds(
    rule: IdleRule,
) -> None:
    memo, attributor = costs.WindowMemo(), Attributor(CONFIG)
    window = _window({"n1": {"gpu": 5.6, "cpu": 2.0, "ram": 0.0}})
    rate = memo.window(window, attributor, rule, True, live=True, llm_scale=0.5)
    month = memo.window(window, attributor, rule, True, live=False, llm_scale=1.0)
    assert month.lines is rate.lines  # placed once for both
    for got, live, scale in ((rate, True, 0.5), (month, False, 1.0)):
        fresh = costs.window(window, attributor, rule, True, live=live, llm_scale=scale)
        assert (got.ledger, got.llm_scale, got.live) == (fresh.ledger, scale, live)
    # A rate made from the shared charge leaves the month's total as it was.
    assert month.ledger.total() == pytest.approx(window.total())
    assert rate.ledger.total() == pytest.approx(window.total() / window.hours)

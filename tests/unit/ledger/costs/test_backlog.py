"""The labelling backlog: ranked by money, keys named, folded past the limit, adds up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.config.schema import Config, IdlePolicy
from exporter.exposition.catalogue.costs import LABELLING_BACKLOG_COST_MONTH_TO_DATE
from exporter.exposition.series.costs import backlog_samples
from exporter.ledger.attribution import OTHER, UNALLOCATED, Attributor, Placement
from exporter.ledger.costs import window as costs
from exporter.ledger.costs.backlog import Entry, backlog, team_backlog, team_keys, workload_of
from exporter.ledger.costs.policies import idle_rule
from exporter.sources.opencost.snapshot import AllocationSet
from exporter.sources.opencost.source import parse_allocation_response
from tests.support.properties import examples

NOW = datetime(2026, 11, 15, 12, tzinfo=UTC)
CONFIG = Config.model_validate(
    {
        "teams": [{"name": "search", "namespaces": ["search"]}],
        "attribution": {
            "team_label_keys": ["team", "equipo"],
            "namespace_label_keys": ["team"],
            "fallback_label_keys": ["app.kubernetes.io/part-of"],
        },
    }
)


def _alloc(ns: str, workload: str, labels: dict[str, str], gpu: float, cpu: float) -> Any:
    return {
        "name": f"n1/{ns}/{workload}",
        "properties": {"namespace": ns, "node": "n1", "labels": labels},
        "gpuCost": gpu,
        "cpuCost": cpu,
        "ramCost": 0.0,
    }


def _window(*allocs: Any) -> AllocationSet:
    data = {a["name"]: a for a in allocs}
    data["__idle__"] = {"gpuCost": 10.0, "cpuCost": 2.0, "ramCost": 0.0}
    parsed, idle = parse_allocation_response({"code": 200, "data": [data]})
    return AllocationSet(NOW - timedelta(hours=24), NOW, parsed, idle)


def test_unallocated_is_ranked_by_money_with_the_keys_that_would_place_it() -> None:
    window = _window(
        # Unlabelled in an unmapped namespace: 120 + 30 = 150.
        _alloc("batch", "job:nightly", {}, 120.0, 30.0),
        # Unlabelled too, smaller: 40 + 5 = 45.
        _alloc("sandbox", "deployment:notebook", {"app": "jupyter"}, 40.0, 5.0),
        # Placed by a team label: not in the backlog.
        _alloc("batch", "deployment:api", {"team": "vision"}, 500.0, 50.0),
        # Placed only by the fallback key: 60 + 4 = 64 on team "ml-platform".
        _alloc("tools", "deployment:mlflow", {"app.kubernetes.io/part-of": "ml-platform"}, 60, 4),
        # Placed by the namespace: not in the backlog.
        _alloc("search", "deployment:ranker", {}, 80.0, 8.0),
    )
    rule = idle_rule(IdlePolicy.PROPORTIONAL)
    made = costs.window(window, Attributor(CONFIG), rule, False, live=False, llm_scale=1.0)
    found = team_backlog(CONFIG, made.lines, made.allocations)
    keys = ("label:team", "label:equipo", "namespace_label:team")
    assert [(r.namespace, r.workload, r.cost) for r in found.unallocated] == [
        ("batch", "job:nightly", 150.0),
        ("sandbox", "deployment:notebook", 45.0),
    ]
    assert all(r.keys == keys and r.owner == UNALLOCATED for r in found.unallocated)
    (fallback,) = found.fallback
    assert (fallback.namespace, fallback.workload, fallback.owner, fallback.keys) == (
        "tools",
        "deployment:mlflow",
        "ml-platform",
        ("app_kubernetes_io_part_of",),
    )
    assert fallback.cost == 64.0
    # The ranked unallocated cost is the allocations' own: 195, before the idle policy adds
    # __unallocated__'s share of idle to its ledger row.
    assert found.unallocated_total == 195.0
    assert made.ledger.costs[(UNALLOCATED, "gpu")] == 160.0


def test_past_the_limit_the_rest_is_one_other_row_and_the_list_adds_up() -> None:
    entries = [Entry("ns", f"w{i}", Placement(UNALLOCATED, "none"), float(i)) for i in range(1, 6)]
    found = backlog(entries, ("label:team",), limit=2)
    assert [(r.workload, r.cost) for r in found.unallocated] == [
        ("w5", 5.0),
        ("w4", 4.0),
        (OTHER, 6.0),
    ]
    assert found.unallocated_total == 15.0


def test_equal_costs_rank_by_name_and_samples_are_bounded() -> None:
    entries = [Entry("b", "w", Placement(UNALLOCATED, "none"), 1.0)] + [
        Entry("a", f"w{i}", Placement(UNALLOCATED, "none"), 1.0) for i in range(30)
    ]
    entries.append(Entry("c", "x", Placement("t", "fallback", "owner"), 2.0))
    found = backlog(entries, ("label:team",))
    assert found.unallocated[0].namespace == "a"
    samples = list(backlog_samples(found))
    assert len(samples) == 21 + 1
    assert all(s.family is LABELLING_BACKLOG_COST_MONTH_TO_DATE for s in samples)
    last = dict(samples[-1].labels)
    assert last == {
        "kind": "fallback",
        "namespace": "c",
        "workload": "x",
        "team": "t",
        "key": "owner",
    }


def test_workload_is_the_controller_part_of_the_name() -> None:
    assert workload_of("node-1/ml/deployment:web", "ml") == "deployment:web"
    assert workload_of("odd-name", "ml") == "odd-name"


def test_team_keys_are_the_configured_keys_as_written() -> None:
    assert team_keys(CONFIG) == ("label:team", "label:equipo", "namespace_label:team")


ANNOTATED = Config.model_validate(
    {
        "teams": [{"name": "search", "namespaces": ["search"]}],
        "attribution": {
            "team_label_keys": ["team"],
            "team_annotation_keys": ["finops.io/team"],
            "namespace_label_keys": ["team"],
            "namespace_annotation_keys": ["finops.io/owner"],
        },
    }
)


def test_team_keys_name_annotation_keys_in_precedence_order() -> None:
    assert team_keys(ANNOTATED) == (
        "label:team",
        "annotation:finops.io/team",
        "namespace_label:team",
        "namespace_annotation:finops.io/owner",
    )


def test_an_owner_known_by_annotation_leaves_the_backlog() -> None:
    owned = _alloc("batch", "job:nightly", {}, 120.0, 30.0)
    owned["properties"]["annotations"] = {"finops.io/team": "vision"}
    by_ns = _alloc("lab", "deployment:notebook", {}, 40.0, 5.0)
    by_ns["properties"]["namespaceAnnotations"] = {"finops.io/owner": "search"}
    window = _window(owned, by_ns, _alloc("sandbox", "deployment:x", {}, 7.0, 1.0))
    rule = idle_rule(IdlePolicy.PROPORTIONAL)
    for config, left in ((CONFIG, 195.0 + 8.0), (ANNOTATED, 8.0)):
        made = costs.window(window, Attributor(config), rule, False, live=False, llm_scale=1.0)
        found = team_backlog(config, made.lines, made.allocations)
        assert found.unallocated_total == left
        assert all(r.keys == team_keys(config) for r in found.unallocated)
    vias = {(line.namespace, line.placement.via, line.placement.team) for line in made.lines}
    assert vias == {
        ("batch", "annotation", "vision"),
        ("lab", "namespace_annotation", "search"),
        ("sandbox", "none", UNALLOCATED),
    }


@settings(max_examples=examples(100))
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.integers(0, 40),
            st.sampled_from(["none", "fallback", "label"]),
            st.floats(0, 1e6),
        ),
        max_size=60,
    ),
    st.integers(0, 25),
)
def test_each_list_adds_up_to_the_cost_it_ranks(
    drawn: list[tuple[str, int, str, float]], limit: int
) -> None:
    entries = [
        Entry(ns, f"w{w}", Placement(UNALLOCATED if via == "none" else "t", via, "k"), cost)
        for ns, w, via, cost in drawn
    ]
    found = backlog(entries, (), limit)
    unplaced = sum(e.cost for e in entries if e.placement.via == "none")
    fallback = sum(e.cost for e in entries if e.placement.via == "fallback")
    assert abs(found.unallocated_total - unplaced) <= 1e-9 * max(1.0, unplaced)
    assert abs(found.fallback_total - fallback) <= 1e-9 * max(1.0, fallback)
    assert len(found.unallocated) <= limit + 1
    assert [r.cost for r in found.unallocated[:limit]] == sorted(
        (r.cost for r in found.unallocated[:limit]), reverse=True
    )


@settings(max_examples=examples(100))
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["batch", "search", "tools"]),
            st.integers(0, 30),
            st.dictionaries(
                st.sampled_from(["team", "equipo", "app.kubernetes.io/part-of", "app"]),
                st.sampled_from(["vision", "ml-platform", "__x__"]),
            ),
            st.floats(0, 1e4),
            st.floats(0, 1e3),
        ),
        max_size=30,
        unique_by=lambda drawn: (drawn[0], drawn[1]),
    ),
    st.sampled_from(list(IdlePolicy)),
    st.booleans(),
)
def test_the_lists_are_what_the_ledger_placed_under_every_policy(
    drawn: list[tuple[str, int, dict[str, str], float, float]],
    policy: IdlePolicy,
    by_node: bool,
) -> None:
    window = _window(*(_alloc(ns, f"w{i}", labels, gpu, cpu) for ns, i, labels, gpu, cpu in drawn))
    rule = idle_rule(policy)
    made = costs.window(window, Attributor(CONFIG), rule, by_node, live=False, llm_scale=1.0)
    found = team_backlog(CONFIG, made.lines, made.allocations)
    # The unallocated list is the __unallocated__ row less what an idle policy put on it.
    placed = sum(
        v for (team, c), v in made.ledger.costs.items() if team == UNALLOCATED and c != "idle_share"
    )
    assert abs(found.unallocated_total - placed) <= 1e-9 * max(1.0, placed)
    # The fallback list is the ledger's fallback-placed cost.
    fallback = sum(made.ledger.fallback.values())
    assert abs(found.fallback_total - fallback) <= 1e-9 * max(1.0, fallback)

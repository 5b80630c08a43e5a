"""Every dimension at once: a small month worked by hand, and each dimension's own split."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.config.schema import Config
from exporter.ledger.attribution import IDLE, OTHER, Attributor, Placement
from exporter.ledger.costs.ledger import CostLine, Ledger
from exporter.ledger.dimensions.joint import JointSplit, folded_joint, joint_split
from exporter.ledger.dimensions.split import LlmTags, split_ledger
from exporter.ledger.join import join
from exporter.sources.reading import Reading
from tests.conftest import FIXED_NOW
from tests.unit.ledger.dimensions.test_beyond_team import EXAMPLE, _example_records

NAMES = ("product", "environment")
LINES = (
    CostLine(Placement("search", "namespace"), "n1", {"gpu": 600.0, "cpu": 100.0}),  # vllm
    CostLine(Placement("search", "namespace"), "n1", {"cpu": 50.0}),  # indexer
    CostLine(Placement("vision", "label"), "n2", {"gpu": 200.0, "cpu": 100.0}),  # detector
)
VALUES = (["chat", "chat", "inspection"], ["prod", "dev", "staging"])
LEDGER = Ledger(
    {
        ("search", "gpu"): 600.0,
        ("search", "cpu"): 150.0,
        ("search", "idle_share"): 60.0,
        ("search", "llm_external"): 40.0,
        ("vision", "gpu"): 200.0,
        ("vision", "cpu"): 100.0,
        ("vision", "idle_share"): 20.0,
        ("vision", "llm_external"): 80.0,
        (IDLE, "gpu"): 20.0,
    }
)
# search tagged 30 of its 40 LLM spend product:chat; vision 60 of its 80 product:rag.
TAGS = LlmTags(
    {"product:chat": 30.0, "product:rag": 60.0},
    120.0,
    {"search": {"product:chat": 30.0}, "vision": {"product:rag": 60.0}},
    {"search": 40.0, "vision": 80.0},
)
PREFIXES = ("product:", None)


def _joint(
    folded: tuple[set[str], ...] = (),
) -> dict[tuple[str, str], dict[tuple[str, ...], float]]:
    split = joint_split(NAMES, LEDGER, LINES, VALUES, TAGS, PREFIXES, folded)
    assert split.names == NAMES
    return {k: dict(v) for k, v in split.by_team.items()}


def test_each_team_row_is_split_by_its_workloads_joint_values() -> None:
    joint = _joint()
    assert joint[("search", "gpu")] == {("chat", "prod"): 600.0}
    assert joint[("search", "cpu")] == {("chat", "prod"): 100.0, ("chat", "dev"): 50.0}
    # No workload has an idle share: the team's whole cost places it, 700 : 50.
    assert joint[("search", "idle_share")] == pytest.approx(
        {("chat", "prod"): 56.0, ("chat", "dev"): 4.0}
    )
    assert joint[(IDLE, "gpu")] == {(IDLE, IDLE): 20.0}


def test_tags_place_their_share_in_their_dimension_and_workloads_the_rest() -> None:
    joint = _joint()
    # search: 30 tagged chat, its environment by the workloads (700 : 50): 28 prod, 2 dev;
    # the other 10 by the workloads' joint mix: 9.33 (chat, prod), 0.67 (chat, dev).
    assert joint[("search", "llm_external")] == pytest.approx(
        {("chat", "prod"): 28.0 + 28.0 / 3, ("chat", "dev"): 2.0 + 2.0 / 3}
    )
    # vision: 60 tagged rag (the detector is staging), 20 by the detector (inspection).
    assert joint[("vision", "llm_external")] == pytest.approx(
        {("rag", "staging"): 60.0, ("inspection", "staging"): 20.0}
    )


@pytest.mark.parametrize("d", [0, 1])
def test_summed_by_one_dimension_it_is_that_dimensions_own_split(d: int) -> None:
    own = split_ledger(NAMES[d], LEDGER, LINES, VALUES[d], TAGS, PREFIXES[d])
    summed: dict[tuple[str, str, str], float] = {}
    for (team, component), combos in _joint().items():
        for combo, amount in combos.items():
            key = (team, combo[d], component)
            summed[key] = summed.get(key, 0.0) + amount
    assert summed == pytest.approx(own.by_team)
    assert sum(summed.values()) == pytest.approx(sum(LEDGER.costs.values()))


def test_values_the_cap_folded_are_other() -> None:
    joint = _joint(({"rag"}, set()))
    assert joint[("vision", "llm_external")] == pytest.approx(
        {(OTHER, "staging"): 60.0, ("inspection", "staging"): 20.0}
    )


def test_no_dimension_gives_one_empty_combination_per_row() -> None:
    split = joint_split((), LEDGER, LINES, (), TAGS)
    assert split.by_team[("search", "cpu")] == {(): 150.0}


def test_the_join_splits_the_docs_worked_example_jointly_when_asked() -> None:
    config = Config.model_validate(EXAMPLE)
    reading = Reading.open(FIXED_NOW, config.zone)
    plain = join(config, Attributor(config), _example_records(), reading)
    assert plain.joint.by_team == {}  # the exporter's refresh does not pay for it
    joint = join(config, Attributor(config), _example_records(), reading, detail=True).joint
    assert joint.names == NAMES
    # docs/dimensions.md: search is (chat, prod) throughout, its LLM tags say chat too; vision
    # is (inspection, staging); the notebook is unallocated in both.
    assert joint.by_team[("search", "shared")] == pytest.approx({("chat", "prod"): 60.0})
    assert joint.by_team[("search", "llm_external")] == pytest.approx({("chat", "prod"): 40.0})
    assert joint.by_team[("vision", "llm_external")] == pytest.approx(
        {("inspection", "staging"): 80.0}
    )
    assert joint.by_team[("__unallocated__", "cpu")] == pytest.approx(
        {("__unallocated__", "__unallocated__"): 10.0}
    )


_value = st.sampled_from(["a", "b", "c", "__unallocated__"])


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["t1", "t2", "t3"]),
            st.dictionaries(st.sampled_from(["gpu", "cpu"]), st.floats(0, 1e4), min_size=1),
            _value,
            _value,
        ),
        max_size=8,
    ),
    st.dictionaries(
        st.tuples(
            st.sampled_from(["t1", "t2", "t4", IDLE]),
            st.sampled_from(["gpu", "cpu", "llm_external", "lent"]),
        ),
        st.floats(-1e4, 1e4),
    ),
    st.dictionaries(
        st.sampled_from(["t1", "t2", "t4"]),
        st.dictionaries(st.sampled_from(["product:a", "product:z", "x"]), st.floats(0, 100)),
    ),
)
def test_every_dimension_of_the_joint_split_is_its_own_split(
    workloads: list[tuple[str, dict[str, float], str, str]],
    costs: dict[tuple[str, str], float],
    team_tags: dict[str, dict[str, float]],
) -> None:
    lines = [CostLine(Placement(t, "label"), "n", c) for t, c, _, _ in workloads]
    values = ([w[2] for w in workloads], [w[3] for w in workloads])
    ledger = Ledger(costs)
    totals = {t: 50.0 for t in team_tags}
    tags = LlmTags({}, 0.0, team_tags, totals)
    joint = joint_split(NAMES, ledger, lines, values, tags, PREFIXES)
    assert sum(sum(m.values()) for m in joint.by_team.values()) == pytest.approx(
        sum(costs.values()), abs=1e-6
    )
    for d in (0, 1):
        own = split_ledger(NAMES[d], ledger, lines, values[d], tags, PREFIXES[d])
        summed: dict[tuple[str, str, str], float] = {}
        for (team, component), combos in joint.by_team.items():
            for combo, amount in combos.items():
                key = (team, combo[d], component)
                summed[key] = summed.get(key, 0.0) + amount
        for key in set(summed) | set(own.by_team):
            assert summed.get(key, 0.0) == pytest.approx(own.by_team.get(key, 0.0), abs=1e-6)


def test_teams_the_cap_folded_count_under_other() -> None:
    names = ("product", "environment")
    joint = JointSplit(
        names, {("x", "gpu"): {("chat", "prod"): 1.0}, ("y", "gpu"): {("chat", "prod"): 2.0}}
    )
    assert folded_joint(joint, {"x", "y"}).by_team == {(OTHER, "gpu"): {("chat", "prod"): 3.0}}
    assert folded_joint(joint, set()) is joint

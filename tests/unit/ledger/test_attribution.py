"""Attribution: canonical keys, the precedence, strict teams, and order independence."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from exporter.config.schema import Config
from exporter.ledger import attribution
from exporter.ledger.attribution import Attributor, Placement, canonical_key, canonical_labels


def _attributor(**attribution: object) -> Attributor:
    return Attributor(
        Config.model_validate(
            {
                "teams": [
                    {"name": "datos", "namespaces": ["ns-datos"], "label_values": ["data"]},
                    {"name": "vision"},
                ],
                "attribution": {
                    "team_label_keys": ["team", "app.kubernetes.io/team"],
                    "namespace_label_keys": ["owner"],
                    "fallback_label_keys": ["app.kubernetes.io/part-of"],
                    **attribution,
                },
            }
        )
    )


def test_canonical_key_matches_every_sanitiser() -> None:
    for raw in (
        "app.kubernetes.io/part-of",
        "label_app_kubernetes_io_part_of",
        "App.Kubernetes.IO/Part-Of",
        "app_kubernetes_io_part_of",
    ):
        assert canonical_key(raw) == "app_kubernetes_io_part_of"


def test_precedence() -> None:
    a = _attributor()
    # 1. workload label beats everything, in configured key order
    assert a.place("ns-datos", {"team": "vision"}) == Placement("vision", "label", "team")
    assert a.place("x", {"app_kubernetes_io_team": "Vision"}).team == "vision"
    # 2. namespace mapping from config
    assert a.place("ns-datos", {}) == Placement("datos", "namespace")
    # 3. namespace label
    assert a.place("x", {}, {"owner": "data"}) == Placement("datos", "namespace_label", "owner")
    # 4. fallback keys, reported as such
    placed = a.place("x", {"label_app_kubernetes_io_part_of": "vision"})
    assert placed == Placement("vision", "fallback", "app_kubernetes_io_part_of")
    assert placed.is_fallback
    # 5. nothing matched
    assert a.place("x", {"unrelated": "y"}) == Placement("__unallocated__", "none")


def _annotated(**attribution: object) -> Attributor:
    return _attributor(
        team_annotation_keys=["finops.io/team"],
        namespace_annotation_keys=["finops.io/owner"],
        **attribution,
    )


def test_precedence_with_annotations() -> None:
    a = _annotated()
    team_note = {"finops.io/team": "vision"}
    # 1. the workload's own label beats its own annotation
    assert a.place("x", {"team": "data"}, {}, team_note) == Placement("datos", "label", "team")
    # 2. its own annotation beats every namespace rule (OpenCost's sanitised key matches too)
    assert a.place("ns-datos", {}, {"owner": "data"}, team_note) == Placement(
        "vision", "annotation", "finops_io_team"
    )
    assert a.place("x", {}, None, {"finops_io_team": "Vision"}).team == "vision"
    # 3.-4. the teams' namespaces, then namespace labels, beat namespace annotations
    ns_note = {"finops.io/owner": "vision"}
    assert a.place("ns-datos", {}, {}, {}, ns_note) == Placement("datos", "namespace")
    assert a.place("x", {}, {"owner": "data"}, {}, ns_note) == Placement(
        "datos", "namespace_label", "owner"
    )
    # 5. the namespace annotation beats the fallback keys
    part_of = {"app.kubernetes.io/part-of": "data"}
    assert a.place("x", part_of, {}, {}, ns_note) == Placement(
        "vision", "namespace_annotation", "finops_io_owner"
    )
    # 6. fallbacks, then 7. nothing: annotations of unconfigured keys are never read
    assert a.place("x", part_of, {}, {"team": "vision"}) == Placement(
        "datos", "fallback", "app_kubernetes_io_part_of"
    )
    assert a.place("x", {}, {}, {"owner": "vision"}, {"team": "vision"}).team == "__unallocated__"


def test_annotations_are_not_read_unless_configured() -> None:
    a = _attributor()
    notes = {"finops.io/team": "vision", "team": "vision", "owner": "vision"}
    assert a.place("x", {}, {}, notes, notes) == Placement("__unallocated__", "none")


def test_annotation_values_follow_the_label_rules() -> None:
    # Reserved-looking and (under strict_teams) undeclared values do not match: the next rule does.
    a = _annotated(strict_teams=True)
    assert a.place("ns-datos", {}, {}, {"finops.io/team": "growth"}) == Placement(
        "datos", "namespace"
    )
    assert _annotated().place("x", {}, {}, {"finops.io/team": "__idle__"}).team == (
        "__unallocated__"
    )
    assert _annotated().place("x", {}, {}, {"finops.io/team": "Growth Team"}).team == (
        "growth-team"
    )


def test_undeclared_value_becomes_its_own_team_unless_strict() -> None:
    assert _attributor().place("ns-datos", {"team": "Growth Hackers"}).team == "growth-hackers"
    strict = _attributor(strict_teams=True)
    # strict: the undeclared value does not match, so the namespace mapping decides
    assert strict.place("ns-datos", {"team": "growth"}) == Placement("datos", "namespace")
    assert strict.place("x", {"team": "growth"}).team == "__unallocated__"


def test_reserved_looking_values_never_make_teams() -> None:
    assert _attributor().place("x", {"team": "__idle__"}).team == "__unallocated__"


def test_queue_and_litellm_mapping() -> None:
    a = Attributor(
        Config.model_validate(
            {
                "teams": [
                    {
                        "name": "datos",
                        "cluster_queues": ["cq-datos"],
                        "litellm_teams": ["id-1", "Datos"],
                    },
                ]
            }
        )
    )
    assert a.team_for_queue("cq-datos") == "datos"
    assert a.team_for_litellm("id-1", None) == "datos"
    assert a.team_for_litellm("id-9", "Datos") == "datos"
    assert a.team_for_litellm("id-9", None) == "id-9"  # named by LiteLLM: an owner


def _owners(*, strict: bool = False) -> Attributor:
    return Attributor(
        Config.model_validate(
            {
                "teams": [
                    {"name": "datos", "cluster_queues": ["cq-datos"], "label_values": ["data"]},
                    {"name": "vision", "litellm_teams": ["4b1f-vision"]},
                ],
                "attribution": {"strict_teams": strict},
            }
        )
    )


def test_undeclared_queues_and_litellm_aliases_are_their_own_teams() -> None:
    a = _owners()
    # Normalised like a label value: lower case, runs of other characters become one dash.
    assert a.team_for_queue("CQ Growth/Batch") == "cq-growth-batch"
    assert a.team_for_litellm("77aa-uuid", "Growth Team") == "growth-team"
    # A name that normalises to a declared team name or label value is that team.
    assert a.team_for_queue("Vision") == "vision"
    assert a.team_for_litellm("77aa-uuid", " DATA ") == "datos"
    # The declared id wins over whatever alias the proxy shows.
    assert a.team_for_litellm("4b1f-vision", "Growth Team") == "vision"


def test_undeclared_owners_never_take_reserved_or_empty_names() -> None:
    a = _owners()
    for name in ("__idle__", "__other__", "__Unallocated__", "--", "  "):
        assert a.team_for_queue(name) == "__unallocated__"
        # The LiteLLM team still has an owner's name: its id.
        assert a.team_for_litellm("77aa-uuid", name) == "77aa-uuid"
        assert a.team_for_litellm(name, None) == "__unallocated__"


def test_an_undeclared_litellm_team_without_an_alias_is_its_own_team_by_id() -> None:
    # LiteLLM names it: only cost with no owner at all is __unallocated__.
    a = _owners()
    assert a.team_for_litellm("C0A8D9E3-Search", None) == "c0a8d9e3-search"
    assert a.team_for_litellm("4b1f-vision", None) == "vision"  # declared ids still win
    assert a.team_for_litellm("datos", None) == "datos"  # an id that is a team's name
    assert _owners(strict=True).team_for_litellm("c0a8d9e3-search", None) == "__unallocated__"


def test_strict_teams_sends_undeclared_owners_to_unallocated() -> None:
    a = _owners(strict=True)
    assert a.team_for_queue("cq-growth") == "__unallocated__"
    assert a.team_for_litellm("77aa-uuid", "Growth Team") == "__unallocated__"
    # Declared identities, names and label values still match under strict_teams.
    assert a.team_for_queue("cq-datos") == "datos"
    assert a.team_for_litellm("77aa-uuid", "data") == "datos"


labels_strategy = st.dictionaries(
    st.sampled_from(["team", "TEAM", "label_team", "app.kubernetes.io/part-of", "owner", "x"]),
    st.sampled_from(["datos", "vision", "data", "other", ""]),
)
annotations_strategy = st.dictionaries(
    st.sampled_from(["finops.io/team", "finops_io_team", "finops.io/owner", "team", "x"]),
    st.sampled_from(["datos", "vision", "data", "other", "", "__idle__"]),
)


@given(labels_strategy, labels_strategy, st.sampled_from(["ns-datos", "x"]), st.randoms())
def test_placement_does_not_depend_on_key_order(
    labels: dict[str, str], ns_labels: dict[str, str], namespace: str, rnd: object
) -> None:
    a = _attributor()
    expected = a.place(namespace, labels, ns_labels)
    items, ns_items = list(labels.items()), list(ns_labels.items())
    rnd.shuffle(items)  # type: ignore[attr-defined]
    rnd.shuffle(ns_items)  # type: ignore[attr-defined]
    assert a.place(namespace, dict(items), dict(ns_items)) == expected


def _named(fresh: Attributor, source: dict[str, str], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        team = fresh.team_for_queue(source[key]) if source.get(key) else None
        if team is not None and team != "__unallocated__":
            return team
    return None


def _reference(
    namespace: str,
    labels: dict[str, str],
    ns: dict[str, str],
    notes: dict[str, str] | None = None,
    ns_notes: dict[str, str] | None = None,
    *,
    annotated: bool = False,
) -> str:
    """The precedence written out over canonical_labels, with no memo anywhere."""
    fresh = _attributor()
    workload, ns_labels = canonical_labels(labels), canonical_labels(ns)
    own, ns_own = canonical_labels(notes or {}), canonical_labels(ns_notes or {})
    note_keys = ("finops_io_team",) if annotated else ()
    ns_note_keys = ("finops_io_owner",) if annotated else ()
    rules: list[tuple[dict[str, str], tuple[str, ...]]] = [
        (workload, ("team", "app_kubernetes_io_team")),
        (own, note_keys),
    ]
    for source, keys in rules:
        team = _named(fresh, source, keys)
        if team is not None:
            return team
    if namespace == "ns-datos":
        return "datos"
    for source, keys in (
        (ns_labels, ("owner",)),
        (ns_own, ns_note_keys),
        (workload, ("app_kubernetes_io_part_of",)),
        (ns_labels, ("app_kubernetes_io_part_of",)),
    ):
        team = _named(fresh, source, keys)
        if team is not None:
            return team
    return "__unallocated__"


@given(st.lists(st.tuples(labels_strategy, labels_strategy, st.sampled_from(["ns-datos", "x"]))))
def test_memoised_placement_matches_the_precedence(
    workloads: list[tuple[dict[str, str], dict[str, str], str]],
) -> None:
    # One attributor for the whole list, so later workloads hit what earlier ones memoised.
    a = _attributor()
    for labels, ns_labels, namespace in workloads:
        expected = _reference(namespace, labels, ns_labels)
        assert a.place(namespace, labels, ns_labels).team == expected


@given(
    st.lists(
        st.tuples(
            labels_strategy,
            labels_strategy,
            annotations_strategy,
            annotations_strategy,
            st.sampled_from(["ns-datos", "x"]),
        )
    ),
    st.booleans(),
)
def test_memoised_placement_with_annotations_matches_the_precedence(
    workloads: list[tuple[dict[str, str], dict[str, str], dict[str, str], dict[str, str], str]],
    annotated: bool,
) -> None:
    # Labels and annotations share the plan memo and often the same key sets: a memo keyed
    # on the keys alone must still give each map its own answer, as a fresh placement does.
    a = _annotated() if annotated else _attributor()
    for labels, ns_labels, notes, ns_notes, namespace in workloads:
        expected = _reference(namespace, labels, ns_labels, notes, ns_notes, annotated=annotated)
        assert a.place(namespace, labels, ns_labels, notes, ns_notes).team == expected
        fresh = _annotated() if annotated else _attributor()
        assert a.place(namespace, labels, ns_labels, notes, ns_notes) == fresh.place(
            namespace, labels, ns_labels, notes, ns_notes
        )


def test_memos_start_again_when_full_and_answers_stay_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(attribution, "_MEMO_LIMIT", 3)
    a = _attributor()
    values = [f"Team {i}" for i in range(10)]
    first = [a.place("x", {"team": v, f"k{i}": "y"}) for i, v in enumerate(values)]
    again = [a.place("x", {"team": v, f"k{i}": "y"}) for i, v in enumerate(values)]
    assert [p.team for p in first] == [f"team-{i}" for i in range(10)]
    assert again == first
    assert max(len(a._plans), len(a._teams), len(a._placements)) <= 3

"""Attribution: which team owns a workload, by a documented and deterministic precedence.

Precedence, first match wins:

1. a workload label whose key is in `attribution.team_label_keys` (in config order);
2. a workload annotation whose key is in `attribution.team_annotation_keys`;
3. the namespace, through the teams' `namespaces` lists in config;
4. a namespace label whose key is in `attribution.namespace_label_keys`;
5. a namespace annotation whose key is in `attribution.namespace_annotation_keys`;
6. a workload label, then a namespace label, whose key is in `attribution.fallback_label_keys`
   (reported as a fallback, so it cannot hide a labelling gap);
7. `__unallocated__`.

Annotation keys are compared in canonical form like label keys (`finops.io/team` matches
OpenCost's sanitised `finops_io_team`). With no annotation keys configured (the default) no
annotation is ever looked at, so rules 2 and 5 cost nothing.

A namespace named in `shared_costs.namespaces` goes before all of these to `__shared__`, whose
money the shared-costs step spreads onto the teams (ledger.dimensions.shared).

A label value that names no declared team becomes its own team, normalised, unless
`strict_teams` is set: then it does not match and the next rule is tried. Undeclared
ClusterQueues and LiteLLM teams (by alias, else by id) follow the same rule, falling to
`__unallocated__`; `max_teams` caps all of them alike, in the ledger (chargeback.cap_teams).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from exporter.config.schema import Config

__all__ = [
    "IDLE",
    "OTHER",
    "SHARED",
    "UNALLOCATED",
    "Attributor",
    "Placement",
    "canonical_key",
    "canonical_labels",
    "normalise_team",
]

IDLE = "__idle__"
UNALLOCATED = "__unallocated__"
OTHER = "__other__"
SHARED = "__shared__"

_SEPARATORS = re.compile(r"[./\-]")
_TEAM_VALUE = re.compile(r"[^a-z0-9_.-]+")
# Entries a memo may hold before it starts again: far more than the distinct label key sets,
# label values or placements of any one cluster, small next to its allocations.
_MEMO_LIMIT = 100_000

K = TypeVar("K")
V = TypeVar("V")


def canonical_key(key: str) -> str:
    """Canonical form of a label key, whoever sanitised it (OpenCost, DCGM, kube-state-metrics)."""
    key = _SEPARATORS.sub("_", key.strip().lower())
    return key.removeprefix("label_")


def canonical_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """Canonicalise every key; on a clash the sorted-first original key wins, whatever the order."""
    out: dict[str, str] = {}
    for key in sorted(labels):
        out.setdefault(canonical_key(key), labels[key])
    return out


def normalise_team(value: str) -> str:
    """How a free-form label value becomes a team name."""
    return _TEAM_VALUE.sub("-", value.strip().lower()).strip("-")


@dataclass(frozen=True)
class Placement:
    """Where a workload's cost goes: the team, the rule that decided, and the key it used."""

    team: str
    # label | annotation | namespace | namespace_label | namespace_annotation | fallback |
    # shared | none
    via: str
    key: str = ""

    @property
    def is_fallback(self) -> bool:
        """True when only a fallback key placed the cost."""
        return self.via == "fallback"


class Attributor:
    """Places workloads on teams according to the config; pure and safe to share."""

    def __init__(self, config: Config) -> None:
        attribution = config.attribution
        self._team_keys = tuple(canonical_key(k) for k in attribution.team_label_keys)
        self._annotation_keys = tuple(canonical_key(k) for k in attribution.team_annotation_keys)
        self._ns_keys = tuple(canonical_key(k) for k in attribution.namespace_label_keys)
        self._ns_annotation_keys = tuple(
            canonical_key(k) for k in attribution.namespace_annotation_keys
        )
        self._fallback_keys = tuple(canonical_key(k) for k in attribution.fallback_label_keys)
        self._strict = attribution.strict_teams
        shared = config.shared_costs
        self._shared = frozenset(shared.namespaces) if shared is not None else frozenset()
        self._by_namespace = {ns: t.name for t in config.teams for ns in t.namespaces}
        self._by_value: dict[str, str] = {}
        for team in config.teams:
            for value in (team.name, *team.label_values):
                self._by_value.setdefault(normalise_team(value), team.name)
        self._by_queue = {cq: t.name for t in config.teams for cq in t.cluster_queues}
        self._by_litellm = {lt: t.name for t in config.teams for lt in t.litellm_teams}
        # Memos of pure results, for a cluster's many workloads that share label (and
        # annotation) key sets, values and placements. A plan depends on a key set alone, so
        # labels and annotations share one memo keyed by the keys as they come. Each is emptied
        # when it grows past _MEMO_LIMIT, so pod churn over months cannot grow them unbounded.
        self._plans: dict[tuple[str, ...], dict[str, str]] = {}
        self._teams: dict[str, str | None] = {}
        self._placements: dict[tuple[str, str, str], Placement] = {}

    def place(
        self,
        namespace: str,
        labels: Mapping[str, str],
        namespace_labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        namespace_annotations: Mapping[str, str] | None = None,
    ) -> Placement:
        """Decide the team of a workload from its namespace and its (raw) labels and annotations."""
        if namespace in self._shared:
            return self._placement(SHARED, "shared", "")
        ns_labels = namespace_labels or {}
        plan = self._plans.get(tuple(labels)) or self._plan(labels)
        for key in self._team_keys:  # rule 1 inlined: nearly every workload stops here
            raw = plan.get(key)
            team = self._team_from_value(labels[raw]) if raw is not None else None
            if team is not None:
                return self._placement(team, "label", key)
        if self._annotation_keys and annotations:
            found = self._first(annotations, self._annotation_keys)
            if found is not None:
                return self._placement(found[0], "annotation", found[1])
        if namespace in self._by_namespace:
            return self._placement(self._by_namespace[namespace], "namespace", "")
        found = self._first(ns_labels, self._ns_keys)
        if found is not None:
            return self._placement(found[0], "namespace_label", found[1])
        if self._ns_annotation_keys and namespace_annotations:
            found = self._first(namespace_annotations, self._ns_annotation_keys)
            if found is not None:
                return self._placement(found[0], "namespace_annotation", found[1])
        found = self._first(labels, self._fallback_keys) or self._first(
            ns_labels, self._fallback_keys
        )
        if found is not None:
            return self._placement(found[0], "fallback", found[1])
        return self._placement(UNALLOCATED, "none", "")

    def team_for_queue(self, cluster_queue: str) -> str:
        """The team of a Kueue ClusterQueue: the team declaring it, else one named after it.

        An undeclared queue has an owner with a name, so it is treated like a label value:
        normalised, matched against team names and label values, its own team unless
        `strict_teams`, and never a reserved name (then `__unallocated__`).
        """
        if cluster_queue in self._by_queue:
            return self._by_queue[cluster_queue]
        return self._team_from_value(cluster_queue) or UNALLOCATED

    def team_for_litellm(self, team_id: str, alias: str | None) -> str:
        """The team of a LiteLLM team: by declared id, then declared alias, then by its alias,
        then by its id.

        An undeclared alias or id is treated like a label value, as for queues: a team LiteLLM
        names is an owner, so its cost is its own (an opaque uuid as a team name tells the
        reader to declare it) unless `strict_teams`. The id stands in when there is no alias,
        or one that names nothing (empty, reserved). Only a usage row with no team at all is
        `__unallocated__`, and it never gets here.
        """
        if team_id in self._by_litellm:
            return self._by_litellm[team_id]
        if alias is not None:
            if alias in self._by_litellm:
                return self._by_litellm[alias]
            team = self._team_from_value(alias)
            if team is not None:
                return team
        return self._team_from_value(team_id) or UNALLOCATED

    def _first(self, labels: Mapping[str, str], keys: tuple[str, ...]) -> tuple[str, str] | None:
        """The first of `keys` (canonical) whose value in the raw `labels` names a team."""
        if not keys:
            return None
        plan = self._plan(labels)
        for key in keys:
            raw = plan.get(key)
            team = self._team_from_value(labels[raw]) if raw is not None else None
            if team is not None:
                return team, key
        return None

    def _plan(self, labels: Mapping[str, str]) -> dict[str, str]:
        """Canonical key -> the raw key `canonical_labels` would take its value from.

        It depends on the key set only, and workloads share a few key sets, so it is memoised
        by the keys as they come.
        """
        keys = tuple(labels)
        plan = self._plans.get(keys)
        if plan is None:
            plan = {}
            for key in sorted(keys):
                plan.setdefault(canonical_key(key), key)
            _remember(self._plans, keys, plan)
        return plan

    def _team_from_value(self, value: str) -> str | None:
        try:
            return self._teams[value]
        except KeyError:
            team = self._team_of(value)
            _remember(self._teams, value, team)
            return team

    def _team_of(self, value: str) -> str | None:
        normal = normalise_team(value)
        if not normal:
            return None
        if normal in self._by_value:
            return self._by_value[normal]
        if self._strict or normal.startswith("__"):
            return None
        return normal

    def _placement(self, team: str, via: str, key: str) -> Placement:
        # One shared (frozen) Placement per outcome rather than one per workload.
        memo = (team, via, key)
        found = self._placements.get(memo)
        if found is None:
            found = Placement(team, via, key)
            _remember(self._placements, memo, found)
        return found


def _remember(memo: dict[K, V], key: K, value: V) -> None:
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value

"""Dimensions beyond the team: each allocation's value, and a window's ledger split by value.

Pure; conserves money. A dimension value is resolved by the team's precedence (see
attribution): the workload's own labels, then its own annotations, then its namespace's labels
and annotations, then fallback label keys (workload, then namespace), else `__unallocated__`;
keys are compared in canonical form and values normalised like team names.

The split starts from the team ledger the join produced, after every step (idle policy, quota,
LLM, shared costs), and divides each (team, component) amount over the values the team's own
workloads carry: by that component's cost per value when the team's workloads have some, else
by the team's whole cost per value. LLM components follow LiteLLM request tags where the
dimension reads them (LiteLLM reports tag spend for the whole proxy, so a team's tagged share
follows the proxy-wide split of tagged spend). `__idle__` stays `__idle__`; a row no workload
explains (a team known only from LiteLLM or Kueue) is `__unallocated__`. Every (team,
component) amount is divided whole, so each dimension adds up to the same total as the team
ledger.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from exporter.config.dimensions import DimensionConfig
from exporter.ledger.attribution import IDLE, OTHER, UNALLOCATED, canonical_key, normalise_team
from exporter.ledger.costs.ledger import CostLine, Ledger
from exporter.sources.opencost.records import Allocation

__all__ = [
    "DimensionCosts",
    "DimensionResolver",
    "LlmTags",
    "cap_values",
    "positive_costs",
    "split_ledger",
    "tag_values",
]

_LLM_PREFIX = "llm_"
_Weights = dict[str, float]
K = TypeVar("K")


class DimensionResolver:
    """The value of one dimension for a workload, from its labels and annotations."""

    def __init__(self, config: DimensionConfig) -> None:
        self.name = config.name
        self._labels = tuple(canonical_key(k) for k in config.label_keys)
        self._annotations = tuple(canonical_key(k) for k in config.annotation_keys)
        self._ns_labels = tuple(canonical_key(k) for k in config.namespace_label_keys)
        self._ns_annotations = tuple(canonical_key(k) for k in config.namespace_annotation_keys)
        self._fallback = tuple(canonical_key(k) for k in config.fallback_label_keys)
        self._plans: dict[tuple[str, ...], dict[str, str]] = {}

    def value(self, allocation: Allocation) -> str:
        """The allocation's value, or `__unallocated__` when no configured key names one."""
        a = allocation
        for raw, keys in (
            (a.labels, self._labels),
            (a.annotations, self._annotations),
            (a.namespace_labels, self._ns_labels),
            (a.namespace_annotations, self._ns_annotations),
            (a.labels, self._fallback),
            (a.namespace_labels, self._fallback),
        ):
            found = self._first(raw, keys) if keys and raw else None
            if found is not None:
                return found
        return UNALLOCATED

    def _first(self, raw: Mapping[str, str], keys: tuple[str, ...]) -> str | None:
        plan = self._plan(raw)
        for key in keys:
            original = plan.get(key)
            value = normalise_team(raw[original]) if original is not None else ""
            if value and not value.startswith("__"):
                return value
        return None

    def _plan(self, raw: Mapping[str, str]) -> dict[str, str]:
        # Canonical key -> raw key, as canonical_labels picks it; workloads share key sets.
        keys = tuple(raw)
        plan = self._plans.get(keys)
        if plan is None:
            plan = {}
            for key in sorted(keys):
                plan.setdefault(canonical_key(key), key)
            if len(self._plans) > 10_000:
                self._plans.clear()
            self._plans[keys] = plan
        return plan


def tag_values(tag_spend: Mapping[str, float], prefix: str | None) -> dict[str, float]:
    """LiteLLM spend per dimension value, from the tags that start with `prefix`."""
    out: dict[str, float] = defaultdict(float)
    if prefix is None:
        return {}
    for tag in sorted(tag_spend):
        if tag.startswith(prefix):
            value = normalise_team(tag[len(prefix) :])
            if value and not value.startswith("__") and tag_spend[tag] > 0:
                out[value] += tag_spend[tag]
    return dict(out)


@dataclass(frozen=True)
class LlmTags:
    """LiteLLM spend by request tag: per team where the proxy names the keys' teams, and for
    the whole proxy; with all LLM spend, per team and in all (the same currency)."""

    spend: Mapping[str, float] = field(default_factory=dict)  # tag -> spend
    total: float = 0.0
    by_team: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # team -> tag ->
    team_total: Mapping[str, float] = field(default_factory=dict)


def _share(tagged: Mapping[str, float], spend: float) -> float:
    """The part of some LLM spend its tags explain, at most all of it (a request may carry
    several tags of one prefix)."""
    if spend > 0:
        return min(1.0, sum(tagged.values()) / spend)
    return 1.0 if tagged else 0.0


@dataclass(frozen=True)
class DimensionCosts:
    """One dimension's split of a window: money per (value, component)."""

    name: str
    costs: dict[tuple[str, str], float] = field(default_factory=dict)
    # The same money per (team, value, component): each team row's own split (FOCUS Tags).
    by_team: dict[tuple[str, str, str], float] = field(default_factory=dict)

    def total(self) -> float:
        """The sum of every value's cost."""
        return sum(self.costs.values())

    def by_value(self) -> dict[str, float]:
        """Money per value, every component together."""
        out: dict[str, float] = defaultdict(float)
        for (value, _), amount in sorted(self.costs.items()):
            out[value] += amount
        return dict(out)


def split_ledger(
    name: str,
    ledger: Ledger,
    lines: Sequence[CostLine],
    values: Sequence[str],
    llm_tags: LlmTags | None = None,
    prefix: str | None = None,
) -> DimensionCosts:
    """Divide every (team, component) amount of `ledger` over the dimension's values.

    `lines` and `values` are the window's placed allocations and each one's value. With a tag
    `prefix`, the share of a team's LLM spend its tags explain follows the tags' values (the
    team's own tags when the proxy names teams, else the proxy's), the rest the team.
    """
    by_component, by_team = positive_costs(lines, values)
    tags = llm_tags or LlmTags()
    proxy = _positive(tag_values(tags.spend, prefix))
    proxy_share = _share(proxy, tags.total)
    teams = {team: _positive(tag_values(t, prefix)) for team, t in tags.by_team.items()}
    out: dict[tuple[str, str, str], float] = defaultdict(float)
    for (team, component), amount in sorted(ledger.costs.items()):
        if team == IDLE:
            out[(IDLE, IDLE, component)] += amount
            continue
        own = by_component.get((team, component)) or by_team.get(team) or {UNALLOCATED: 1.0}
        # Tags say who asked for LLM spend: they place what a team pays for LLM use, never
        # the credit of a serving team whose cost moved to the teams that sent tokens.
        if component.startswith(_LLM_PREFIX) and amount > 0:
            tagged, share = proxy, proxy_share
            if tags.by_team:
                tagged = teams.get(team, {})
                share = _share(tagged, tags.team_total.get(team, 0.0))
            if share > 0:
                _spread(out, team, component, amount * share, tagged)
                amount *= 1.0 - share
        _spread(out, team, component, amount, own)
    return _costs(name, out)


def _costs(name: str, by_team: Mapping[tuple[str, str, str], float]) -> DimensionCosts:
    """Sum the per-team split into the per-value one, in sorted order (the same floats)."""
    costs: dict[tuple[str, str], float] = defaultdict(float)
    for (_, value, component), amount in sorted(by_team.items()):
        costs[(value, component)] += amount
    kept = {k: v for k, v in sorted(by_team.items()) if v}
    return DimensionCosts(name, {k: v for k, v in costs.items() if v}, kept)


def positive_costs(
    lines: Sequence[CostLine], keys: Sequence[K]
) -> tuple[dict[tuple[str, str], dict[K, float]], dict[str, dict[K, float]]]:
    """Positive cost per (team, component) and key, and per team and key; `keys` by line."""
    by_component: dict[tuple[str, str], dict[K, float]] = defaultdict(lambda: defaultdict(float))
    by_team: dict[str, dict[K, float]] = defaultdict(lambda: defaultdict(float))
    for line, key in zip(lines, keys, strict=True):
        team = line.placement.team
        for component, amount in line.costs.items():
            if amount > 0:
                by_component[(team, component)][key] += amount
                by_team[team][key] += amount
    return dict(by_component), dict(by_team)


def _positive(weights: Mapping[str, float]) -> _Weights:
    return {k: v for k, v in weights.items() if v > 0}


def _spread(
    out: dict[tuple[str, str, str], float],
    team: str,
    component: str,
    amount: float,
    weights: Mapping[str, float],
) -> None:
    if not amount:
        return
    total = sum(weights.values())
    if total <= 0:
        out[(team, UNALLOCATED, component)] += amount
        return
    # Sorted: the float sums never depend on the order allocations came in. The fraction first:
    # `amount * weight` can round away in subnormal weights, the fraction cannot exceed one.
    for value in sorted(weights):
        out[(team, value, component)] += amount * (weights[value] / total)


def cap_values(
    costs: DimensionCosts, max_values: int, keep: Collection[str] | None = None
) -> tuple[DimensionCosts, list[str]]:
    """Fold the cheapest values beyond `max_values` into `__other__`; returns the folded ones.

    Reserved values are always kept and not counted. Pass `keep` to keep only the values
    another window kept (the hourly rate follows the month's cut, and a value the month does
    not have yet folds too, so the rate never has more series than the month).
    """
    spend: dict[str, float] = defaultdict(float)
    for (value, _), amount in costs.costs.items():
        if not value.startswith("__"):
            spend[value] += abs(amount)
    if keep is None:
        ranked = sorted(spend, key=lambda v: (-spend[v], v))
        fold = sorted(ranked[max_values:])
    else:
        fold = sorted(v for v in spend if v not in keep)
    gone = set(fold)
    if not gone:
        return costs, []
    out: dict[tuple[str, str, str], float] = defaultdict(float)
    for (team, value, component), amount in sorted(costs.by_team.items()):
        out[(team, OTHER if value in gone else value, component)] += amount
    return _costs(costs.name, out), sorted(gone)

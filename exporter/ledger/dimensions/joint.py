"""Every dimension at once: each team row's cost by the joint combination of its values (pure).

The FOCUS export tags each row with every dimension, so it needs a team's cost by combination
(`product` x `environment` ...), not by one dimension at a time. The split follows
`dimensions.split_ledger` step by step, with a tuple of values where it has one value, so the
combinations of a (team, component) add up to it and, summed by any one dimension, give that
dimension's own split (up to float rounding):

- a team's workloads place it by their joint values (the component's cost per combination when
  the team's workloads have some, else the team's whole cost per combination);
- the share of LLM spend a dimension's tags explain follows the tags in that dimension, and the
  other dimensions' values of that share follow the team's workloads (a tag names one
  dimension's value, never a combination). With several tagged dimensions, each is tagged or not
  independently, by its own share: every subset of them gets the product of their shares.
- `__idle__` is `__idle__` in every dimension; a row no workload explains is `__unallocated__`;
  values a dimension's cap folded are `__other__`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product

from exporter.ledger.attribution import IDLE, OTHER, UNALLOCATED
from exporter.ledger.costs.ledger import CostLine, Ledger
from exporter.ledger.dimensions.split import LlmTags, positive_costs, tag_values

__all__ = ["Combination", "JointSplit", "folded_joint", "joint_split"]

Combination = tuple[str, ...]  # one value per dimension, in config order
_Mix = dict[Combination, float]
_LLM_PREFIX = "llm_"


@dataclass(frozen=True)
class JointSplit:
    """The month's money per (team, component) and combination of every dimension's values."""

    names: tuple[str, ...] = ()
    by_team: Mapping[tuple[str, str], Mapping[Combination, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Tagged:
    """One dimension's tags for one team's LLM spend: the share they explain, and by value."""

    dimension: int
    share: float
    values: Mapping[str, float]


def joint_split(
    names: Sequence[str],
    ledger: Ledger,
    lines: Sequence[CostLine],
    values: Sequence[Sequence[str]],
    llm_tags: LlmTags | None = None,
    prefixes: Sequence[str | None] = (),
    folded: Sequence[Collection[str]] = (),
) -> JointSplit:
    """Divide every (team, component) amount of `ledger` over the joint combinations.

    `values[d]` holds each line's value of dimension d; `prefixes[d]` its LiteLLM tag prefix and
    `folded[d]` the values its cap folded into `__other__` (both optional).
    """
    n = len(names)
    combos = [tuple(column[i] for column in values) for i in range(len(lines))]
    by_component, by_team = positive_costs(lines, combos)
    tags = llm_tags or LlmTags()
    prefix_of = list(prefixes) + [None] * (n - len(prefixes))
    out: dict[tuple[str, str], _Mix] = defaultdict(lambda: defaultdict(float))
    for (team, component), amount in sorted(ledger.costs.items()):
        if not amount:
            continue
        if team == IDLE:
            out[(team, component)][(IDLE,) * n] += amount
            continue
        own = by_component.get((team, component)) or by_team.get(team) or {(UNALLOCATED,) * n: 1.0}
        tagged: list[_Tagged] = []
        if component.startswith(_LLM_PREFIX) and amount > 0:
            tagged = [t for d in range(n) if (t := _tags(d, team, tags, prefix_of[d])) is not None]
        _mixture(out[(team, component)], amount, own, tagged)
    gone = [set(f) for f in folded] + [set()] * (n - len(folded))
    return JointSplit(tuple(names), _fold(out, gone))


def _tags(dimension: int, team: str, tags: LlmTags, prefix: str | None) -> _Tagged | None:
    """What a dimension's tags say about a team's LLM spend, as `split_ledger` reads them."""
    if prefix is None:
        return None
    if tags.by_team:
        values = _positive(tag_values(tags.by_team.get(team, {}), prefix))
        spend = tags.team_total.get(team, 0.0)
    else:
        values, spend = _positive(tag_values(tags.spend, prefix)), tags.total
    share = min(1.0, sum(values.values()) / spend) if spend > 0 else (1.0 if values else 0.0)
    return _Tagged(dimension, share, values) if share > 0 else None


def _mixture(
    out: _Mix, amount: float, own: Mapping[Combination, float], tagged: list[_Tagged]
) -> None:
    """Spread `amount`: each subset of the tagged dimensions, by the product of their shares,
    takes its tags' values there and the team's workloads' values everywhere else."""
    for chosen in product((False, True), repeat=len(tagged)):
        weight = 1.0
        for t, on in zip(tagged, chosen, strict=True):
            weight *= t.share if on else 1.0 - t.share
        if weight <= 0:
            continue
        by_tags = [t for t, on in zip(tagged, chosen, strict=True) if on]
        parts = _marginal(own, {t.dimension for t in by_tags})
        for t in by_tags:
            parts = _expand(parts, t)
        for combo, share in sorted(parts.items()):
            out[combo] += amount * weight * share


def _marginal(own: Mapping[Combination, float], drop: Collection[int]) -> _Mix:
    """The workloads' mix, as shares, with the dimensions in `drop` left blank for the tags."""
    total = sum(own.values())
    out: _Mix = defaultdict(float)
    for combo, amount in sorted(own.items()):
        key = tuple("" if d in drop else v for d, v in enumerate(combo))
        out[key] += amount / total
    return dict(out)


def _expand(parts: _Mix, tagged: _Tagged) -> _Mix:
    total = sum(tagged.values.values())
    out: _Mix = defaultdict(float)
    for combo, share in sorted(parts.items()):
        for value, spend in sorted(tagged.values.items()):
            key = (*combo[: tagged.dimension], value, *combo[tagged.dimension + 1 :])
            out[key] += share * spend / total
    return dict(out)


def _positive(weights: Mapping[str, float]) -> dict[str, float]:
    return {k: v for k, v in weights.items() if v > 0}


def _fold(
    mixes: Mapping[tuple[str, str], _Mix], gone: Sequence[Collection[str]]
) -> dict[tuple[str, str], dict[Combination, float]]:
    out: dict[tuple[str, str], dict[Combination, float]] = {}
    for key, mix in sorted(mixes.items()):
        folded: _Mix = defaultdict(float)
        for combo, amount in sorted(mix.items()):
            named = tuple(OTHER if v in g else v for v, g in zip(combo, gone, strict=True))
            folded[named] += amount
        out[key] = {c: a for c, a in folded.items() if a}
    return out


def folded_joint(joint: JointSplit, folded: Collection[str]) -> JointSplit:
    """The split with the teams the cap folded counted under `__other__`, as the ledgers are."""
    if not folded:
        return joint
    mix: dict[tuple[str, str], _Mix] = defaultdict(lambda: defaultdict(float))
    for (team, component), combos in sorted(joint.by_team.items()):
        for combo, amount in sorted(combos.items()):
            mix[(OTHER if team in folded else team, component)][combo] += amount
    return JointSplit(joint.names, {cell: dict(combos) for cell, combos in mix.items()})

"""Config of the dimensions beyond the team (product, environment, ...) and of shared costs."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Sequence
from enum import StrEnum
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from exporter.config.types import StrictModel

__all__ = [
    "DimensionConfig",
    "ShareRule",
    "SharedCostsConfig",
    "unique_dimensions",
    "weight_issues",
]

# Label names Prometheus and the ledger already use: a dimension called so would clash.
_TAKEN = frozenset({"team", "component", "dimension", "value", "kind", "key", "cluster"})
_Key = Annotated[str, Field(min_length=1, max_length=253)]


class DimensionConfig(StrictModel):
    """One allocation key beyond the team, resolved by the team's precedence."""

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")]
    label_keys: tuple[_Key, ...] = ()
    annotation_keys: tuple[_Key, ...] = ()
    namespace_label_keys: tuple[_Key, ...] = ()
    namespace_annotation_keys: tuple[_Key, ...] = ()
    fallback_label_keys: tuple[_Key, ...] = ()
    # A LiteLLM request tag starting with this prefix names the value of LLM spend.
    litellm_tag_prefix: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    # Distinct values kept per dimension; the cheapest beyond it fold into `__other__`.
    max_values: Annotated[int, Field(ge=1, le=1000)] = 50

    @field_validator("name")
    @classmethod
    def _not_taken(cls, name: str) -> str:
        if name in _TAKEN:
            raise ValueError(f"{name!r} is a label the exporter already uses; choose another name")
        return name

    @model_validator(mode="after")
    def _has_a_key(self) -> DimensionConfig:
        keys = (
            self.label_keys,
            self.annotation_keys,
            self.namespace_label_keys,
            self.namespace_annotation_keys,
            self.fallback_label_keys,
        )
        if not any(keys) and self.litellm_tag_prefix is None:
            raise ValueError(
                f"dimension {self.name!r} names no key: every value would be unallocated"
            )
        return self


class ShareRule(StrEnum):
    """How shared cost is spread onto the teams."""

    PROPORTIONAL = "proportional"  # in proportion to each team's own cost
    EVEN = "even"  # the same amount for every declared team
    FIXED = "fixed"  # by the configured weights


_Weight = Annotated[float, Field(gt=0, lt=1e9)]


class SharedCostsConfig(StrictModel):
    """Namespaces and teams (label values) whose cost every team shares, and the rule."""

    namespaces: tuple[_Key, ...] = ()
    teams: tuple[_Key, ...] = ()
    rule: ShareRule = ShareRule.PROPORTIONAL
    weights: dict[str, _Weight] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> SharedCostsConfig:
        if not self.namespaces and not self.teams:
            raise ValueError("shared_costs names no namespace and no team")
        if self.rule is ShareRule.FIXED and not self.weights:
            raise ValueError("rule: fixed needs weights (team: weight)")
        if self.rule is not ShareRule.FIXED and self.weights:
            raise ValueError(f"weights apply only to rule: fixed, not {self.rule}")
        if not all(math.isfinite(w) for w in self.weights.values()):
            raise ValueError("weights must be finite")
        both = sorted(set(self.teams) & set(self.weights))
        if both:
            raise ValueError(f"a shared team cannot also receive shared cost: {', '.join(both)}")
        return self


def weight_issues(
    shared: SharedCostsConfig, declared: Sequence[str], reserved: Collection[str]
) -> list[tuple[tuple[str | int, ...], str, tuple[str | int, ...] | None]]:
    """Each weight whose key is not a declared team: (its key, why, the teams' key or None)."""
    teams: tuple[str | int, ...] | None = ("teams",) if declared else None
    return [
        (("shared_costs", "weights", name), why, teams)
        for name in shared.weights
        if (why := _not_a_team(name, declared, reserved))
    ]


def _not_a_team(name: str, declared: Sequence[str], reserved: Collection[str]) -> str:
    """Why `name` cannot receive shared cost, or "" when it is a declared team."""
    if name in declared:
        return ""
    shown = repr(name if len(name) <= 60 else name[:60] + "...")
    if name in reserved:
        return f"{shown} is a reserved row and never receives shared cost"
    # Team names are compared exactly: "Research" beside "research" would be a second row.
    alike = [d for d in declared if d.lower() == name.lower()]
    if alike:
        return f"{shown} is not a declared team; did you mean {alike[0]!r}?"
    if not declared:
        return f"{shown} is not a declared team: declare it under teams (none are declared)"
    return f"{shown} is not a declared team (declared: {', '.join(declared)})"


def unique_dimensions(dimensions: tuple[DimensionConfig, ...]) -> tuple[DimensionConfig, ...]:
    """Refuse two dimensions of one name (the series would merge)."""
    dupes = sorted(n for n, c in Counter(d.name for d in dimensions).items() if c > 1)
    if dupes:
        raise ValueError(f"dimension names must be unique, repeated: {', '.join(dupes)}")
    return dimensions

"""Samples: the value objects every pure module hands to the renderer (family, labels, value)."""

from __future__ import annotations

import msgspec

from exporter.exposition.catalogue.family import Family

__all__ = ["Sample", "sources_of"]

Labels = tuple[tuple[str, str], ...]
# One copy of each label set and each (name, value) pair across every sample built: at 10,000
# GPUs a join makes 340,000 samples over 160,000 label sets of only 2,100 pairs, and the
# sets recur from one rebuild to the next. A cache past _MAX_SETS starts again (label values
# churn: pods, GPUs, models come and go).
_SETS: dict[Labels, Labels] = {}
_PAIRS: dict[tuple[str, str], tuple[str, str]] = {}
_MAX_SETS = 1_000_000


class Sample(msgspec.Struct, frozen=True, gc=False):
    """One series of a catalogue family, which it holds by handle (a misspelt one cannot be).

    A frozen struct rather than a frozen dataclass: a join at scale makes hundreds of
    thousands, and a struct is built in C where a dataclass sets each field in Python.
    """

    family: Family
    labels: tuple[tuple[str, str], ...]
    value: float

    @classmethod
    def of(cls, family: Family, value: float, **labels: str) -> Sample:
        """Build a sample with labels given as keywords (kept in the family's label order)."""
        key = tuple(labels.items())
        shared = _SETS.get(key)
        if shared is None:
            shared = _shared(key)
        return cls(family, shared, value)


def _shared(key: Labels) -> Labels:
    if len(_SETS) >= _MAX_SETS:
        _SETS.clear()
        _PAIRS.clear()
    pair = _PAIRS.setdefault
    shared = _SETS[key] = tuple([pair(p, p) for p in key])
    return shared


# Components of a team's or a dimension value's cost built from another upstream than the
# family's own: LiteLLM's spend (and vLLM's weights for the serving cost it moves), and the
# quota Kueue says was borrowed or lent. Each moves or adds money on its own, so dropping one
# drops it for every team alike and what remains still sums to OpenCost's cost.
_COMPONENT_INPUTS: dict[str, tuple[str, ...]] = {
    "llm_serving": ("litellm", "vllm"),
    "llm_external": ("litellm",),
    "borrowed": ("kueue",),
    "lent": ("kueue",),
}


def sources_of(sample: Sample) -> frozenset[str]:
    """Every upstream `sample`'s figure is built from: its family's, and its component's."""
    family = sample.family
    found = {family.source, *family.inputs}
    if "component" in family.labels:
        found.update(_COMPONENT_INPUTS.get(dict(sample.labels).get("component", ""), ()))
    return frozenset(found)

"""Samples: the value objects every pure module hands to the renderer (family, labels, value)."""

from __future__ import annotations

import msgspec

from exporter.exposition.catalogue import Family

__all__ = ["Sample"]


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
        return cls(family, tuple(labels.items()), value)

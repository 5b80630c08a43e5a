"""Samples: the value objects every pure module hands to the renderer (family, labels, value)."""

from __future__ import annotations

from dataclasses import dataclass

from exporter.metrics import Family

__all__ = ["Sample"]


@dataclass(frozen=True)
class Sample:
    """One series of a catalogue family, which it holds by handle (a misspelt one cannot be)."""

    family: Family
    labels: tuple[tuple[str, str], ...]
    value: float

    @classmethod
    def of(cls, family: Family, value: float, **labels: str) -> Sample:
        """Build a sample with labels given as keywords (kept in the family's label order)."""
        return cls(family, tuple(labels.items()), value)

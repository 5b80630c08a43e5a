"""What a renderer keeps between renderings: each family's samples, lines and series layout."""

from __future__ import annotations

import math

from exporter.exposition.deflate import Chunk
from exporter.exposition.samples import Sample

__all__ = ["Layout", "RenderCache", "Rendered"]


class Layout:
    """A family's series in exposition order, and each one's line up to its value.

    Kept while the family's samples carry the same labels in the same order, so that new values
    for the same series (a month-to-date that grew) are written without sorting or escaping.
    """

    __slots__ = ("labels", "order", "prefixes")

    def __init__(
        self, labels: list[tuple[tuple[str, str], ...]], order: list[int], prefixes: list[str]
    ) -> None:
        self.labels = labels  # each sample's labels, in the samples' order
        self.order = order  # the samples' indexes, in exposition order
        self.prefixes = prefixes  # `name{labels} ` of each series, in exposition order


class Rendered:
    """One family as rendered: its samples, its series lines, and their layout (None: info)."""

    __slots__ = ("body", "layout", "samples", "zeros")

    def __init__(self, samples: list[Sample], body: Chunk, layout: Layout | None) -> None:
        self.samples = samples
        self.body = body
        self.layout = layout
        # Where the zero values are and which are -0.0; found once, when first rendered.
        self.zeros = tuple((i, _negative(s.value)) for i, s in enumerate(samples) if s.value == 0)

    def same(self, samples: list[Sample]) -> bool:
        """Whether `samples` would render to `body`."""
        if samples != self.samples:  # identical samples make this a pointer walk
            return False
        return all(_negative(samples[i].value) is neg for i, neg in self.zeros)


class RenderCache:
    """Each family as last rendered with this cache, for a caller that renders again and again.

    A family's lines are reused only when its samples equal the last ones, in the same order.
    Equal samples write equal lines but for one case: 0.0 == -0.0, and Go's formatting writes
    "-0.0", so the sign of every zero value is compared too. Failing that, samples with the
    last labels in the last order reuse the layout and only write their values. Not
    thread-safe: one renderer at a time (the Refresher renders under its build lock).
    """

    def __init__(self) -> None:
        self._last: dict[str, Rendered] = {}
        self.reused: tuple[str, ...] = ()  # the families the last rendering took whole
        self.relaid: tuple[str, ...] = ()  # the families whose layout alone it took

    def last(self, name: str) -> Rendered | None:
        """The family as last rendered, if it was."""
        return self._last.get(name)

    def keep(
        self, rendered: dict[str, Rendered], reused: tuple[str, ...], relaid: tuple[str, ...]
    ) -> None:
        """Remember a finished rendering: its families only, so a vanished one is forgotten."""
        self._last, self.reused, self.relaid = rendered, reused, relaid


def _negative(value: float) -> bool:
    return math.copysign(1.0, value) < 0

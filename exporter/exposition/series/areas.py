"""Each area of series with the parts of the result it reads, and a memo that rebuilds only
the areas whose parts changed.

An area declares `reads`: the attributes of the `Chargeback` its builder looks at, dotted for a
part of a part (`units.energy`). A rebuild compares each area's parts with the ones its kept
samples were built from; when every part is equal, the area's samples are the kept list itself,
so the renderer finds the family unchanged by a pointer walk and writes nothing again. An area
that declares nothing (`reads=None`) is rebuilt every time: the safe default for a new family.

Equal parts give equal samples because a builder is a pure function of what it reads; the one
difference equality does not see is the sign of a zero (0.0 == -0.0), so a kept sample may
write `0` where a fresh build would write `-0` (the same number to every reader of the text).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from exporter.exposition.samples import Sample
from exporter.ledger.result import Chargeback

__all__ = ["Area", "SeriesMemo"]


@dataclass(frozen=True)
class Area:
    """A builder of series and the parts of the result it reads (None: it may read anything)."""

    name: str
    build: Callable[[Chargeback], list[Sample]]
    reads: tuple[str, ...] | None = None

    def parts(self, chargeback: Chargeback) -> tuple[object, ...] | None:
        """The values this area's samples are built from; None when it does not say."""
        if self.reads is None:
            return None
        return tuple(_part(chargeback, path) for path in self.reads)


class SeriesMemo:
    """Each area's last samples and the parts they were built from, for a caller that joins
    again and again (the refresher's builder). Holds one list per area, the very lists the
    last build returned, so it costs references, not samples. Not thread-safe: one join at a
    time (the Refresher builds under its build lock).
    """

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple[object, ...], list[Sample]]] = {}
        self.rebuilt: tuple[str, ...] = ()  # the areas the last build ran

    def build(self, areas: Iterable[Area], chargeback: Chargeback) -> list[list[Sample]]:
        """Each area's samples: kept when its parts equal the last ones, else built again."""
        kept: dict[str, tuple[tuple[object, ...], list[Sample]]] = {}
        rebuilt: list[str] = []
        out: list[list[Sample]] = []
        for area in areas:
            parts = area.parts(chargeback)
            last = self._kept.get(area.name)
            # A tuple compares its items identity first: parts the join reused cost nothing.
            if parts is not None and last is not None and last[0] == parts:
                samples = last[1]
            else:
                samples = area.build(chargeback)
                rebuilt.append(area.name)
            if parts is not None:
                kept[area.name] = (parts, samples)
            out.append(samples)
        # Only this build's areas: a vanished area's samples and parts are let go.
        self._kept, self.rebuilt = kept, tuple(rebuilt)
        return out


def _part(chargeback: Chargeback, path: str) -> object:
    """The value at a dotted path; None past a part that is None (no LiteLLM, say)."""
    value: object = chargeback
    for name in path.split("."):
        if value is None:
            return None
        value = getattr(value, name)
    return value

"""How the statement's charts stay readable: a value axis that ends above the largest bar, and
value labels only where they fit inside their bar.

pygal ends its axis at the last tick it picks, which can sit below the tallest bar, and prints
every bar's value, a thin stacked segment's on top of its neighbour's and an empty bar's as
`0,00`. The figures themselves stay in each bar's description and in the tables.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["axis_ticks", "fitting_labels", "label_fits"]

_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
_GLYPH = 0.62  # a figure's glyph is about this wide, in ems (DejaVu Sans digits: 0.636)
_PAD = 2.0  # pixels a label keeps clear of its bar's edges


def axis_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """Round ticks from at or below `low` (and 0) to strictly above `high`: the axis's top tick
    stands above the tallest bar, and its bottom one below the deepest credit."""
    low, high = min(low, 0.0), max(high, 0.0)
    span = max(high - low, 1.0)  # money: an axis of at least one unit
    raw = span / count
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(s * magnitude for s in _STEPS if s * magnitude >= raw)
    bottom = 0 if low >= 0 else math.ceil(low / step) - 1
    top = math.floor(high / step) + 1
    while round(top * step, 10) <= high:  # 1.2 / 0.2 is 5.999...: one step short of above
        top += 1
    return [round(i * step, 10) for i in range(bottom, top + 1)]


def label_fits(text: str, width: float, height: float, font_size: float) -> bool:
    """Whether a value label fits inside a bar of that size (a bar of no size takes none)."""
    wide = len(text) * font_size * _GLYPH + 2 * _PAD
    return width >= wide and height >= font_size + 2 * _PAD


def fitting_labels(font_size: float) -> Callable[[Any], Any]:
    """A pygal XML filter dropping each value label that does not fit inside its bar."""

    def drop(root: Any) -> Any:
        plot = _one(root, "plot", exclude=("overlay", "text-overlay", "tooltip-overlay"))
        labels = _one(root, "text-overlay")
        if plot is None or labels is None:
            return root
        bars = [_rects(serie) for serie in _series(plot)]
        for rects, serie in zip(bars, _series(labels), strict=False):
            texts = [t for t in serie if _local(t.tag) == "text"]
            for rect, text in zip(rects, texts, strict=False):
                width, height = float(rect.get("width", 0)), float(rect.get("height", 0))
                if not label_fits(text.text or "", width, height, font_size):
                    serie.remove(text)
        return root

    return drop


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _classes(element: Any) -> set[str]:
    return set((element.get("class") or "").split())


def _one(root: Any, name: str, exclude: Sequence[str] = ()) -> Any:
    for element in root.iter():
        classes = _classes(element)
        if name in classes and not classes & set(exclude) and _local(element.tag) == "g":
            return element
    return None


def _series(group: Any) -> list[Any]:
    return [e for e in group.iter() if "series" in _classes(e) and _local(e.tag) == "g"]


def _rects(serie: Any) -> list[Any]:
    """Each bar's rectangle, in the order pygal wrote the bars (and their labels)."""
    out: list[Any] = []
    for bar in serie.iter():
        if _classes(bar) == {"bar"}:
            out.extend(r for r in bar if _local(r.tag) == "rect")
    return out

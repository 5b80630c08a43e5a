"""Both exposition formats written straight from samples, each series line formatted once.

prometheus_client formats every sample twice (text, then OpenMetrics), escaping each label
name and value again and walking each OpenMetrics sample name one character at a time; with
thousands of teams that was most of a render. For the families of our catalogue (plain names,
no timestamps, exemplars or units) a series line is the same in both formats, so it is built
once from label pieces memoised per render. The family headers come from prometheus_client
itself, so the bytes stay what it writes (tests compare the two on every catalogue family).

A caller that renders again and again (the Refresher) passes a RenderCache: a family whose
samples equal those it had last time keeps its rendered lines, so a refresh of one source does
not re-render the hundreds of thousands of series another source feeds.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import islice, pairwise
from operator import eq, getitem, itemgetter
from typing import cast

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.exposition import generate_latest
from prometheus_client.openmetrics.exposition import escape_label_name
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.registry import Collector, CollectorRegistry
from prometheus_client.utils import floatToGoString

from exporter.deflate import Chunk
from exporter.metrics import BACKGROUND_NOTE, CATALOGUE, Family, Kind
from exporter.samples import Sample

__all__ = ["RenderCache", "metric_family", "render_chunks", "render_formats"]

# Names both formats write unchanged: OpenMetrics would turn a ':' into '_', text would not.
_PLAIN = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_EOF = "# EOF\n"
_EOF_CHUNK = Chunk(_EOF.encode("utf-8"))
# How prometheus_client writes a value (Go's float formatting), typed for us.
_value = cast(Callable[[float], str], floatToGoString)
_KEY = itemgetter(0)
Series = list[tuple[tuple[str, ...], Sample]]


def metric_family(fam: Family, samples: Sequence[Sample]) -> Metric:
    """One catalogue family as a prometheus_client family, series sorted by labels."""
    help_text = fam.help + BACKGROUND_NOTE if fam.source != "exporter" else fam.help
    metric: GaugeMetricFamily | CounterMetricFamily | InfoMetricFamily
    if fam.kind is Kind.INFO:
        metric = InfoMetricFamily(fam.name, help_text, labels=[])
        for s in samples:
            metric.add_metric([], dict(s.labels))
        return metric
    if fam.kind is Kind.COUNTER:
        metric = CounterMetricFamily(fam.name, help_text, labels=fam.labels)
    else:
        metric = GaugeMetricFamily(fam.name, help_text, labels=fam.labels)
    for values, s in _sorted_series(fam, samples):
        metric.add_metric(list(values), s.value)
    return metric


def render_formats(
    samples: Iterable[Sample], memo: RenderCache | None = None
) -> tuple[bytes, bytes]:
    """The text format and OpenMetrics bytes of the samples, in catalogue order.

    With a `memo`, each family whose samples equal its last rendering's reuses its lines; the
    bytes are the same as without one.
    """
    text, openmetrics = render_chunks(samples, memo)
    return b"".join(c.data for c in text), b"".join(c.data for c in openmetrics)


def render_chunks(
    samples: Iterable[Sample], memo: RenderCache | None = None
) -> tuple[list[Chunk], list[Chunk]]:
    """`render_formats` as chunks (family headers, family lines) that the two formats share."""
    grouped: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        grouped[sample.family.name].append(sample)
    text: list[Chunk] = []
    openmetrics: list[Chunk] = []
    pieces = _Pieces()
    rendered: dict[str, _Rendered] = {}
    reused: list[str] = []
    for fam in CATALOGUE:
        group = grouped.get(fam.name)
        if not group:
            continue
        shape = _shape(fam)
        last = memo.lookup(fam.name, group) if memo is not None else None
        if last is None:
            body = "".join(_lines(fam, shape, group, pieces)).encode("utf-8")
            last = _Rendered(group, Chunk(body))
        else:
            reused.append(fam.name)
        rendered[fam.name] = last
        text += (shape.text_head, last.body)
        openmetrics += (shape.openmetrics_head, last.body)
    openmetrics.append(_EOF_CHUNK)
    if memo is not None:
        memo.keep(rendered, tuple(reused))
    return text, openmetrics


class RenderCache:
    """Each family's samples and series lines from the last rendering that used this cache.

    A family's lines are reused only when its samples equal the last ones, in the same order.
    Equal samples write equal lines but for one case: 0.0 == -0.0, and Go's formatting writes
    "-0.0", so the sign of every zero value is compared too. Not thread-safe: one renderer
    at a time (the Refresher renders under its build lock).
    """

    def __init__(self) -> None:
        self._last: dict[str, _Rendered] = {}
        self.reused: tuple[str, ...] = ()  # the families the last rendering took from here

    def lookup(self, name: str, samples: list[Sample]) -> _Rendered | None:
        """The family as last rendered, if its samples are the same."""
        last = self._last.get(name)
        return last if last is not None and last.same(samples) else None

    def keep(self, rendered: dict[str, _Rendered], reused: tuple[str, ...]) -> None:
        """Remember a finished rendering: its families only, so a vanished one is forgotten."""
        self._last, self.reused = rendered, reused


class _Rendered:
    """One family's samples as rendered, and its series lines."""

    __slots__ = ("body", "samples", "zeros")

    def __init__(self, samples: list[Sample], body: Chunk) -> None:
        self.samples = samples
        self.body = body
        # Where the zero values are and which are -0.0; found once, when first rendered.
        self.zeros = tuple((i, _negative(s.value)) for i, s in enumerate(samples) if s.value == 0)

    def same(self, samples: list[Sample]) -> bool:
        """Whether `samples` would render to `body`."""
        if samples != self.samples:  # identical samples make this a pointer walk
            return False
        return all(_negative(samples[i].value) is neg for i, neg in self.zeros)


def _negative(value: float) -> bool:
    return math.copysign(1.0, value) < 0


@dataclass(frozen=True)
class _Shape:
    """What every series of a family shares: its headers, sample name and label order."""

    text_head: Chunk
    openmetrics_head: Chunk
    sample_name: str
    order: tuple[int, ...]  # indexes into the family's labels, sorted by label name
    # Catalogue-order values -> values in label-name order.
    pick: Callable[[tuple[str, ...]], tuple[str, ...]]


class _Fixed(Collector):
    def __init__(self, metric: Metric) -> None:
        self._metric = metric

    def collect(self) -> Iterable[Metric]:
        return [self._metric]


def _same(values: tuple[str, ...]) -> tuple[str, ...]:
    return values


@cache
def _shape(fam: Family) -> _Shape:
    empty = CollectorRegistry(auto_describe=False)
    empty.register(_Fixed(metric_family(fam, [])))
    text_head = generate_latest(empty)
    openmetrics_head = generate_openmetrics(empty).decode("utf-8")  # type: ignore[no-untyped-call]
    probe = metric_family(fam, [Sample(fam, tuple((n, "x") for n in fam.labels), 1.0)])
    name = probe.samples[0].name
    names = [*fam.labels, name, *(escape_label_name(n) for n in fam.labels)]
    if not all(_PLAIN.fullmatch(n) for n in names) or not openmetrics_head.endswith(_EOF):
        raise ValueError(f"{fam.name}: not a plain family, which this renderer does not write")
    order = tuple(sorted(range(len(fam.labels)), key=lambda i: fam.labels[i]))
    # itemgetter of one index returns the item, not a 1-tuple; one label is in order anyway.
    pick = _same if order == tuple(range(len(order))) else itemgetter(*order)
    head = openmetrics_head.removesuffix(_EOF).encode("utf-8")
    return _Shape(Chunk(text_head), Chunk(head), name, order, pick)


class _Escaped(dict[str, str]):
    """One label's `label="escaped value"` pieces, each escaped on first use."""

    __slots__ = ("_label",)

    def __init__(self, label: str) -> None:
        super().__init__()
        self._label = label

    def __missing__(self, raw: str) -> str:
        escaped = raw.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
        piece = self[raw] = f'{self._label}="{escaped}"'
        return piece


class _Pieces(dict[str, _Escaped]):
    """The escaped pieces of one rendering, per label name."""

    def __missing__(self, label: str) -> _Escaped:
        escaped = self[label] = _Escaped(label)
        return escaped


def _lines(fam: Family, shape: _Shape, samples: Sequence[Sample], pieces: _Pieces) -> list[str]:
    name = shape.sample_name
    if fam.kind is Kind.INFO:
        # Info series keep their order, and their labels are whatever each one carries.
        one = _value(1.0)
        return [_info_line(name, s, pieces, one) for s in samples]
    series = _sorted_series(fam, samples)
    if not fam.labels:
        return [f"{name} {_value(s.value)}\n" for _, s in series]
    escapers = tuple(pieces[fam.labels[i]] for i in shape.order)
    pick, head = shape.pick, name + "{"
    # map(getitem, ...) looks every piece up in C; a miss escapes it once (__missing__).
    return [
        f"{head}{','.join(map(getitem, escapers, pick(values)))}}} {_value(s.value)}\n"
        for values, s in series
    ]


def _info_line(name: str, sample: Sample, pieces: _Pieces, value: str) -> str:
    pairs = sorted(dict(sample.labels).items())
    if not pairs:
        return f"{name} {value}\n"
    return f"{name}{{{','.join(pieces[label][raw] for label, raw in pairs)}}} {value}\n"


def _sorted_series(fam: Family, samples: Sequence[Sample]) -> Series:
    """Each series with its label values in catalogue order, sorted; a duplicate is an error."""
    series = sorted(zip(_label_values(fam, samples), samples, strict=True), key=_KEY)
    keys = [values for values, _ in series]
    if any(map(eq, keys, islice(keys, 1, None))):
        duplicate = next(a for a, b in pairwise(keys) if a == b)
        raise ValueError(f"{fam.name}: duplicate series {list(duplicate)}")
    return series


def _label_values(fam: Family, samples: Sequence[Sample]) -> list[tuple[str, ...]]:
    """Each sample's label values in catalogue order, each tuple built once."""
    wanted = fam.labels
    count = len(wanted)
    out = []
    for s in samples:
        labels = s.labels
        if count and len(labels) == count:
            names, values = zip(*labels, strict=True)
            if names == wanted:  # nearly every sample: built with the catalogue's order
                out.append(values)
                continue
        out.append(_reordered(fam, s))
    return out


def _reordered(fam: Family, sample: Sample) -> tuple[str, ...]:
    labels = dict(sample.labels)
    if set(labels) != set(fam.labels):
        raise ValueError(f"{fam.name}: labels {sorted(labels)} != catalogue {list(fam.labels)}")
    return tuple(labels[name] for name in fam.labels)

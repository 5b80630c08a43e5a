"""Both exposition formats written straight from samples, each series line formatted once.

prometheus_client formats every sample twice (text, then OpenMetrics), escaping each label
name and value again and walking each OpenMetrics sample name one character at a time; with
thousands of teams that was most of a render. For the families of our catalogue (plain names,
no timestamps, exemplars or units) a series line is the same in both formats, so it is built
once from label pieces memoised per render. The family headers come from prometheus_client
itself, so the bytes stay what it writes (tests compare the two on every catalogue family).

A caller that renders again and again (the Refresher) passes a RenderCache: a family whose
samples equal those it had last time keeps its rendered lines, so a refresh of one source does
not re-render the hundreds of thousands of series another source feeds; one whose series are
the same but whose values moved keeps its series order and label pieces, and writes values.
"""

from __future__ import annotations

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

from exporter.exposition.catalogue import CATALOGUE
from exporter.exposition.catalogue.family import BACKGROUND_NOTE, Family, Kind
from exporter.exposition.deflate import Chunk
from exporter.exposition.render_cache import Layout, RenderCache, Rendered
from exporter.exposition.samples import Sample
from exporter.redact import redact

__all__ = ["RenderCache", "metric_family", "render_chunks", "render_formats"]

# Names both formats write unchanged: OpenMetrics would turn a ':' into '_', text would not.
_PLAIN = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_EOF = "# EOF\n"
_EOF_CHUNK = Chunk(_EOF.encode("utf-8"))
# How prometheus_client writes a value (Go's float formatting), typed for us.
_value = cast(Callable[[float], str], floatToGoString)


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
    order, keys = _series_order(fam, samples)
    for i, values in zip(order, keys, strict=True):
        metric.add_metric(list(values), samples[i].value)
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
    rendered: dict[str, Rendered] = {}
    reused: list[str] = []
    relaid: list[str] = []
    for fam in CATALOGUE:
        group = grouped.get(fam.name)
        if not group:
            continue
        shape = _shape(fam)
        last = memo.last(fam.name) if memo is not None else None
        if last is not None and last.same(group):
            reused.append(fam.name)
        else:
            layout = last.layout if last is not None else None
            last = _render_family(fam, shape, group, pieces, layout)
            if layout is not None and last.layout is layout:
                relaid.append(fam.name)
        rendered[fam.name] = last
        text += (shape.text_head, last.body)
        openmetrics += (shape.openmetrics_head, last.body)
    openmetrics.append(_EOF_CHUNK)
    if memo is not None:
        memo.keep(rendered, tuple(reused), tuple(relaid))
    return text, openmetrics


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
        # Label values come from upstream data, which may quote a secret (an echoed key as a
        # name): masked here, where the text leaves, never in the data the join read.
        escaped = redact(raw).replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
        piece = self[raw] = f'{self._label}="{escaped}"'
        return piece


class _Pieces(dict[str, _Escaped]):
    """The escaped pieces of one rendering, per label name."""

    def __missing__(self, label: str) -> _Escaped:
        escaped = self[label] = _Escaped(label)
        return escaped


def _render_family(
    fam: Family, shape: _Shape, samples: list[Sample], pieces: _Pieces, layout: Layout | None
) -> Rendered:
    """A family's lines; with the layout of the same series in the same order, only values."""
    if fam.kind is Kind.INFO:
        # Info series keep their order, and their labels are whatever each one carries.
        one = _value(1.0)
        lines = [_info_line(shape.sample_name, s, pieces, one) for s in samples]
        return Rendered(samples, _chunk(lines), None)
    labels = [s.labels for s in samples]
    if layout is None or layout.labels != labels:
        layout = _layout(fam, shape, samples, labels, pieces)
    pairs = zip(layout.prefixes, layout.order, strict=True)
    return Rendered(samples, _chunk([f"{p}{_value(samples[i].value)}\n" for p, i in pairs]), layout)


def _chunk(lines: list[str]) -> Chunk:
    return Chunk("".join(lines).encode("utf-8"))


def _layout(
    fam: Family,
    shape: _Shape,
    samples: list[Sample],
    labels: list[tuple[tuple[str, str], ...]],
    pieces: _Pieces,
) -> Layout:
    order, keys = _series_order(fam, samples)
    name = shape.sample_name
    if not fam.labels:
        return Layout(labels, order, [f"{name} "] * len(order))
    escapers = tuple(pieces[fam.labels[i]] for i in shape.order)
    pick, head = shape.pick, name + "{"
    # map(getitem, ...) looks every piece up in C; a miss escapes it once (__missing__).
    prefixes = [f"{head}{','.join(map(getitem, escapers, pick(k)))}}} " for k in keys]
    return Layout(labels, order, prefixes)


def _info_line(name: str, sample: Sample, pieces: _Pieces, value: str) -> str:
    pairs = sorted(dict(sample.labels).items())
    if not pairs:
        return f"{name} {value}\n"
    return f"{name}{{{','.join(pieces[label][raw] for label, raw in pairs)}}} {value}\n"


def _series_order(
    fam: Family, samples: Sequence[Sample]
) -> tuple[list[int], list[tuple[str, ...]]]:
    """The samples' indexes sorted by label values (catalogue order), and those values sorted.

    A duplicate series is an error.
    """
    values = _label_values(fam, samples)
    order = sorted(range(len(values)), key=values.__getitem__)
    keys = [values[i] for i in order]
    if any(map(eq, keys, islice(keys, 1, None))):
        duplicate = next(a for a, b in pairwise(keys) if a == b)
        raise ValueError(f"{fam.name}: duplicate series {list(duplicate)}")
    return order, keys


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

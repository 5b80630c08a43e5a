"""Both exposition formats written straight from samples, each series line formatted once.

prometheus_client formats every sample twice (text, then OpenMetrics), escaping each label
name and value again and walking each OpenMetrics sample name one character at a time; with
thousands of teams that was most of a render. For the families of our catalogue (plain names,
no timestamps, exemplars or units) a series line is the same in both formats, so it is built
once from label pieces memoised per render. The family headers come from prometheus_client
itself, so the bytes stay what it writes (tests compare the two on every catalogue family).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
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

from exporter.metrics import BACKGROUND_NOTE, CATALOGUE, Family, Kind
from exporter.samples import Sample

__all__ = ["metric_family", "render_formats"]

# Names both formats write unchanged: OpenMetrics would turn a ':' into '_', text would not.
_PLAIN = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_EOF = "# EOF\n"
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
    for values, s in _sorted_series(fam, samples):
        metric.add_metric(values, s.value)
    return metric


def render_formats(samples: Iterable[Sample]) -> tuple[bytes, bytes]:
    """The text format and OpenMetrics bytes of the samples, in catalogue order."""
    grouped: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        grouped[sample.family.name].append(sample)
    text: list[str] = []
    openmetrics: list[str] = []
    pieces: dict[tuple[str, str], str] = {}  # (label, value) -> 'label="escaped value"'
    for fam in CATALOGUE:
        group = grouped.get(fam.name)
        if not group:
            continue
        shape = _shape(fam)
        lines = _lines(fam, shape, group, pieces)
        text.append(shape.text_head)
        text.extend(lines)
        openmetrics.append(shape.openmetrics_head)
        openmetrics.extend(lines)
    openmetrics.append(_EOF)
    return "".join(text).encode("utf-8"), "".join(openmetrics).encode("utf-8")


@dataclass(frozen=True)
class _Shape:
    """What every series of a family shares: its headers, sample name and label order."""

    text_head: str
    openmetrics_head: str
    sample_name: str
    order: tuple[int, ...]  # indexes into the family's labels, sorted by label name


class _Fixed(Collector):
    def __init__(self, metric: Metric) -> None:
        self._metric = metric

    def collect(self) -> Iterable[Metric]:
        return [self._metric]


@cache
def _shape(fam: Family) -> _Shape:
    empty = CollectorRegistry(auto_describe=False)
    empty.register(_Fixed(metric_family(fam, [])))
    text_head = generate_latest(empty).decode("utf-8")
    openmetrics_head = generate_openmetrics(empty).decode("utf-8")  # type: ignore[no-untyped-call]
    probe = metric_family(fam, [Sample(fam, tuple((n, "x") for n in fam.labels), 1.0)])
    name = probe.samples[0].name
    names = [*fam.labels, name, *(escape_label_name(n) for n in fam.labels)]
    if not all(_PLAIN.fullmatch(n) for n in names) or not openmetrics_head.endswith(_EOF):
        raise ValueError(f"{fam.name}: not a plain family, which this renderer does not write")
    order = tuple(sorted(range(len(fam.labels)), key=lambda i: fam.labels[i]))
    return _Shape(text_head, openmetrics_head.removesuffix(_EOF), name, order)


def _lines(
    fam: Family, shape: _Shape, samples: Sequence[Sample], pieces: dict[tuple[str, str], str]
) -> list[str]:
    name = shape.sample_name
    if fam.kind is Kind.INFO:
        # Info series keep their order, and their labels are whatever each one carries.
        one = _value(1.0)
        return [_line(name, sorted(dict(s.labels).items()), pieces, one) for s in samples]
    out = []
    labels = fam.labels
    for values, s in _sorted_series(fam, samples):
        pairs = [(labels[i], values[i]) for i in shape.order]
        out.append(_line(name, pairs, pieces, _value(s.value)))
    return out


def _line(
    name: str, pairs: Sequence[tuple[str, str]], pieces: dict[tuple[str, str], str], value: str
) -> str:
    if not pairs:
        return f"{name} {value}\n"
    parts = []
    for pair in pairs:
        piece = pieces.get(pair)
        if piece is None:
            label, raw = pair
            escaped = raw.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
            piece = pieces[pair] = f'{label}="{escaped}"'
        parts.append(piece)
    return f"{name}{{{','.join(parts)}}} {value}\n"


def _sorted_series(fam: Family, samples: Sequence[Sample]) -> list[tuple[list[str], Sample]]:
    """Each series with its label values in catalogue order, sorted; a duplicate is an error."""
    series = sorted(((_label_values(fam, s), s) for s in samples), key=lambda vs: vs[0])
    for before, after in pairwise(series):
        if before[0] == after[0]:
            raise ValueError(f"{fam.name}: duplicate series {after[0]}")
    return series


def _label_values(fam: Family, sample: Sample) -> list[str]:
    labels = dict(sample.labels)
    if set(labels) != set(fam.labels):
        raise ValueError(f"{fam.name}: labels {sorted(labels)} != catalogue {list(fam.labels)}")
    return [labels[name] for name in fam.labels]

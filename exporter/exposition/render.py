"""Samples to families to bytes, rendered once per refresh in every format a scrape may ask."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from prometheus_client.core import Metric
from prometheus_client.openmetrics.exposition import (
    CONTENT_TYPE_LATEST as OPENMETRICS_CONTENT_TYPE,
)

from exporter.exposition.catalogue import CATALOGUE
from exporter.exposition.catalogue.health import (
    BUILD_ERRORS,
    SOURCE_BACKOFF_SECONDS,
    SOURCE_DURATION_SECONDS,
    SOURCE_ERRORS,
    SOURCE_LAST_SUCCESS_TIMESTAMP_SECONDS,
    SOURCE_RECONCILE_REPAIRS,
    SOURCE_RECORDS_DROPPED,
    SOURCE_UP,
)
from exporter.exposition.deflate import gzip_of, gzip_prefixed
from exporter.exposition.samples import Sample
from exporter.exposition.textformat import RenderCache, metric_family, render_chunks

__all__ = [
    "BUILD_STAGES",
    "TEXT_CONTENT_TYPE",
    "Exposition",
    "RenderCache",
    "SourceHealth",
    "build_error_samples",
    "health_samples",
    "render",
    "render_before",
]

TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
ERROR_REASONS = (
    "timeout",
    "unreachable",
    "auth",
    "http_4xx",
    "http_5xx",
    "malformed",
    "incomplete",
    "too_large",
    "error",
)
BUILD_STAGES = ("join", "render")


@dataclass(frozen=True)
class SourceHealth:
    """How a source's refreshes have gone."""

    up: bool
    last_success: float | None
    duration: float
    errors: Mapping[str, int]
    dropped: Mapping[str, int] = field(default_factory=dict)
    repairs: int | None = None  # None for a source that keeps no closed days
    backoff: float = 0.0  # seconds the upstream last asked to wait (Retry-After), honoured
    backoff_left: float = 0.0  # of which still to wait, when this health was taken


@dataclass(frozen=True)
class Exposition:
    """One rendering of every family: text and OpenMetrics, each plain and gzipped."""

    text: bytes
    text_gzip: bytes
    openmetrics: bytes
    openmetrics_gzip: bytes

    def body(self, openmetrics: bool, gzipped: bool) -> tuple[bytes, str]:
        """The bytes and content type a scrape gets."""
        if openmetrics:
            return (
                self.openmetrics_gzip if gzipped else self.openmetrics
            ), OPENMETRICS_CONTENT_TYPE
        return (self.text_gzip if gzipped else self.text), TEXT_CONTENT_TYPE


def health_samples(
    health: Mapping[str, SourceHealth], drop_reasons: Iterable[str] = ()
) -> Iterable[Sample]:
    """The source health families, errors and drops pre-initialised to 0 for every reason
    (`drop_reasons`: why the sources drop a record)."""
    for source, h in sorted(health.items()):
        yield Sample.of(SOURCE_UP, 1.0 if h.up else 0.0, source=source)
        if h.last_success is not None:
            yield Sample.of(SOURCE_LAST_SUCCESS_TIMESTAMP_SECONDS, h.last_success, source=source)
        yield Sample.of(SOURCE_DURATION_SECONDS, h.duration, source=source)
        yield Sample.of(SOURCE_BACKOFF_SECONDS, h.backoff, source=source)
        for reason in sorted(set(ERROR_REASONS) | set(h.errors)):
            yield Sample.of(
                SOURCE_ERRORS, float(h.errors.get(reason, 0)), source=source, reason=reason
            )
        for reason in sorted(set(drop_reasons) | set(h.dropped)):
            yield Sample.of(
                SOURCE_RECORDS_DROPPED,
                float(h.dropped.get(reason, 0)),
                source=source,
                reason=reason,
            )
        if h.repairs is not None:
            yield Sample.of(SOURCE_RECONCILE_REPAIRS, float(h.repairs), source=source)


def build_error_samples(errors: Mapping[str, int]) -> Iterable[Sample]:
    """Failed joins and renders, pre-initialised to 0 for every stage."""
    for stage in BUILD_STAGES:
        yield Sample.of(BUILD_ERRORS, float(errors.get(stage, 0)), stage=stage)


def families(samples: Iterable[Sample]) -> list[Metric]:
    """Group samples into catalogue families, in catalogue order, series sorted by labels."""
    grouped: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        grouped[sample.family.name].append(sample)
    return [metric_family(fam, grouped[fam.name]) for fam in CATALOGUE if fam.name in grouped]


def render(samples: Iterable[Sample], memo: RenderCache | None = None) -> Exposition:
    """Render samples once into every format; a scrape then only sends bytes.

    `memo` (a caller's own RenderCache) reuses the lines of families that did not change, and
    their compressed bytes; the two formats share each family's compressed lines.
    """
    text, openmetrics = render_chunks(samples, memo)
    return Exposition(
        b"".join(c.data for c in text),
        gzip_of(text),
        b"".join(c.data for c in openmetrics),
        gzip_of(openmetrics),
    )


def render_before(samples: Iterable[Sample], rest: Exposition) -> Exposition:
    """Render `samples` ahead of an exposition rendered elsewhere, without rendering it again.

    The serving process puts its own families (the worker's health) before the worker's bytes:
    only its few lines are rendered and compressed. No family may be in both.
    """
    text, openmetrics = render_chunks(samples)
    openmetrics = openmetrics[:-1]  # one `# EOF`, the one that ends `rest`
    return Exposition(
        b"".join(c.data for c in text) + rest.text,
        gzip_prefixed(text, rest.text_gzip, rest.text),
        b"".join(c.data for c in openmetrics) + rest.openmetrics,
        gzip_prefixed(openmetrics, rest.openmetrics_gzip, rest.openmetrics),
    )

"""Samples to families to bytes, rendered once per refresh in every format a scrape may ask."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from prometheus_client.core import Metric
from prometheus_client.openmetrics.exposition import (
    CONTENT_TYPE_LATEST as OPENMETRICS_CONTENT_TYPE,
)

from exporter.exposition.catalogue import CATALOGUE
from exporter.exposition.deflate import gzip_of, gzip_prefixed
from exporter.exposition.samples import Sample
from exporter.exposition.textformat import RenderCache, metric_family, render_chunks

__all__ = [
    "TEXT_CONTENT_TYPE",
    "Exposition",
    "RenderCache",
    "render",
    "render_before",
]

TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


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

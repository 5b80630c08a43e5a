"""Health series: how each source's refreshes have gone, and the failed builds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

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
from exporter.exposition.samples import Sample

__all__ = ["BUILD_STAGES", "ERROR_REASONS", "SourceHealth", "build_error_samples", "health_samples"]

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

"""Rendering refuses what the catalogue does not declare: unknown labels, duplicate series."""

from __future__ import annotations

import gzip

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse

from exporter.exposition.catalogue.costs import TEAM_COST_PER_HOUR
from exporter.exposition.catalogue.health import SOURCE_UP, WORKER_RESTARTS, WORKER_UP
from exporter.exposition.render import render, render_before
from exporter.exposition.samples import Sample


def test_render_refuses_labels_the_catalogue_does_not_declare() -> None:
    with pytest.raises(ValueError, match="labels"):
        render([Sample.of(TEAM_COST_PER_HOUR, 1.0, team="a")])


def test_render_refuses_duplicate_series() -> None:
    twice = [Sample.of(SOURCE_UP, 1.0, source="a"), Sample.of(SOURCE_UP, 0.0, source="a")]
    with pytest.raises(ValueError, match="duplicate series"):
        render(twice)


def test_families_rendered_before_another_rendering_make_one_valid_exposition() -> None:
    rest = render([Sample.of(SOURCE_UP, 1.0, source="opencost")])
    both = render_before([Sample.of(WORKER_RESTARTS, 2.0), Sample.of(WORKER_UP, 1.0)], rest)
    assert both.text.endswith(rest.text) and both.text.startswith(b"# HELP chargeback_worker")
    assert gzip.decompress(both.text_gzip) == both.text
    assert gzip.decompress(both.openmetrics_gzip) == both.openmetrics
    assert both.openmetrics.count(b"# EOF") == 1
    names = [f.name for f in om_parse(both.openmetrics.decode())]  # type: ignore[no-untyped-call]
    assert names == ["chargeback_worker_restarts", "chargeback_worker_up", "chargeback_source_up"]

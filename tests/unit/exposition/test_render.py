"""Rendering refuses what the catalogue does not declare: unknown labels, duplicate series."""

from __future__ import annotations

import pytest

from exporter.exposition.catalogue import SOURCE_UP, TEAM_COST_PER_HOUR
from exporter.exposition.render import render
from exporter.exposition.samples import Sample


def test_render_refuses_labels_the_catalogue_does_not_declare() -> None:
    with pytest.raises(ValueError, match="labels"):
        render([Sample.of(TEAM_COST_PER_HOUR, 1.0, team="a")])


def test_render_refuses_duplicate_series() -> None:
    twice = [Sample.of(SOURCE_UP, 1.0, source="a"), Sample.of(SOURCE_UP, 0.0, source="a")]
    with pytest.raises(ValueError, match="duplicate series"):
        render(twice)

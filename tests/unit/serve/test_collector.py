"""The refresh worker's collector: young collections rarer, the older generations untouched."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from exporter.serve.collector import YOUNG_EVERY, tune_collector


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)


def test_only_the_young_threshold_moves(thresholds: tuple[int, int, int]) -> None:
    tune_collector()
    assert gc.get_threshold() == (YOUNG_EVERY, thresholds[1], thresholds[2])
    assert gc.isenabled()  # rarer, never off: cyclic garbage is still freed

"""The collector is held off while a reply is decoded and left as it was found."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from exporter.sources.collector import collector_paused


@pytest.fixture
def restore_collector() -> Iterator[None]:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.usefixtures("restore_collector")
def test_the_collector_is_off_inside_and_on_again_after_even_on_an_error() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the inner one leaves it to the outer
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError, match="bad"), collector_paused():
        raise ValueError("bad")
    assert gc.isenabled()


@pytest.mark.usefixtures("restore_collector")
def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()

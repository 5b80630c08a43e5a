"""Polling for something that should happen soon, with a patience that only guards a hang."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

__all__ = ["PATIENCE", "until"]

# Liveness bounds, not performance figures: generous so a loaded machine cannot trip them.
PATIENCE = 60.0


def until(
    what: str, check: Callable[[], bool], patience: float = PATIENCE, tick: float = 0.1
) -> None:
    """Poll `check` until it holds, or fail the test naming `what`.

    It polls rather than waiting on an event with a timeout, which never times out under
    libfaketime (.ci/run runs some tests on a faked clock).
    """
    end = time.monotonic() + patience
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(tick)

"""How many examples a property test draws: a sample in `make unit`, its full count in CI.

`HYPOTHESIS_PROFILE` picks the profile tests/conftest.py loads: `unit` for the fast loop,
`full` (the default, so a bare `pytest` loses nothing) for `make integration`, which runs every
property test of tests/unit again at its full count. A test that sets its own `max_examples`
would override the profile, so it passes its full count through `examples`.
"""

from __future__ import annotations

import os

__all__ = ["FULL", "PROFILES", "QUICK", "VARIABLE", "examples", "profile"]

VARIABLE = "HYPOTHESIS_PROFILE"
QUICK = "unit"
FULL = "full"
PROFILES = (QUICK, FULL)
# The quick loop draws a tenth of a test's full count, and never fewer than a few: enough to
# catch a property broken everywhere, while the full run still hunts the rare counterexample.
QUICK_SHARE = 10
QUICK_FLOOR = 3
# What a test without a count of its own draws (hypothesis' default is 100).
QUICK_DEFAULT = 10


def profile() -> str:
    """The profile named by the environment; an unknown name is an error, not a silent default."""
    name = os.environ.get(VARIABLE, FULL)
    if name not in PROFILES:
        raise ValueError(f"{VARIABLE}={name!r}: expected one of {', '.join(PROFILES)}")
    return name


def examples(full: int) -> int:
    """`full` under the full profile, a share of it (at least QUICK_FLOOR) in the quick loop."""
    if profile() == FULL:
        return full
    return min(full, max(QUICK_FLOOR, full // QUICK_SHARE))

"""MIG sizes: a MIG instance's share of its GPU, from its profile and the GPU's model (pure)."""

from __future__ import annotations

import re

__all__ = ["mig_share", "mig_slices"]

_MIG_PROFILE = re.compile(
    r"^(?:\d+c\.)?(?P<slices>\d+)g\.\d+gb(?:[+-][a-z]+(?:\.[a-z]+)?)?$", re.IGNORECASE
)
# Compute slices per GPU and the instance sizes that exist (NVIDIA MIG user guide, "Supported
# MIG Profiles"): A100, H100, H200, B200 and GB200 have 7 (profiles 1g, 2g, 3g, 4g, 7g); the
# A30 and the RTX PRO 6000 Blackwell have 4 (1g, 2g, 4g; there is no 3g).
_FOUR_SLICE_MODELS = ("A30", "RTX PRO 6000")
_SIZES = {7: frozenset({1, 2, 3, 4, 7}), 4: frozenset({1, 2, 4})}


def mig_slices(model: str) -> int:
    """The compute slices of a GPU model in MIG mode: 4 on an A30 or RTX PRO 6000, else 7."""
    upper = model.upper()
    return 4 if any(name in upper for name in _FOUR_SLICE_MODELS) else 7


def mig_share(profile: str, model: str) -> float:
    """A MIG instance's share of its GPU: the profile's `<n>g` over the GPU's compute slices.

    An A100/H100/H200/B200 has 7 ("1g.10gb" = 1/7, "3g.40gb" = 3/7); an A30 has 4 ("2g.12gb" =
    2/4). Raises ValueError for a profile that is not `[<c>c.]<n>g.<mem>gb[+<ext>]`, or whose
    size does not exist on that GPU (5g anywhere, 3g on an A30).
    """
    match = _MIG_PROFILE.match(profile.strip())
    if match is None:
        raise ValueError(f"unknown MIG profile {profile!r}")
    slices = mig_slices(model)
    used = int(match["slices"])
    if used not in _SIZES[slices]:
        raise ValueError(f"MIG profile {profile!r} does not fit a {slices}-slice {model!r}")
    return used / slices

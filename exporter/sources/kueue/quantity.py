"""Kubernetes resource quantities ("500m", "120Gi", 9, "2e3") as floats in base units."""

from __future__ import annotations

import math
import re

__all__ = ["parse_quantity"]

# Kubernetes' grammar: a signed decimal number, then one binary suffix, one decimal SI
# suffix, or a decimal exponent. "E" alone is exa, "E3" is an exponent, as in the apiserver.
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:(?P<exponent>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$"
)
_SUFFIX: dict[str, float] = {
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
}


def parse_quantity(value: object) -> float:
    """Parse a quantity given as a JSON number or string into cores, bytes or counts.

    Raises ValueError for anything else (booleans, null, NaN, infinities, unknown suffixes).
    """
    # bool is an int subclass, and `true` is never a quantity.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"expected a quantity (number or string), got {type(value).__name__}")
    if isinstance(value, int | float):
        result = float(value)
    else:
        match = _QUANTITY.match(value.strip())
        if match is None:
            raise ValueError(f"not a Kubernetes quantity: {value!r}")
        # float() reads "1.5e3" itself and turns a huge exponent into inf, caught below.
        result = float(match["number"] + (match["exponent"] or ""))
        if match["suffix"] is not None:
            result *= _SUFFIX[match["suffix"]]
    if not math.isfinite(result):
        raise ValueError(f"not a finite quantity: {value!r}")
    return result

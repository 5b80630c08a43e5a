"""Why an OpenCost record that failed typed decoding is dropped: its fields checked one by one.

Only a record that broke the types or bounds while decoding (exporter/sources/opencost/wire.py)
comes here, so this runs for bad records alone and may be as slow as it is clear.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from exporter.sources.checks import MAX_COST, MAX_GPUS, WRONG_TYPE, BadRecord, label, number
from exporter.sources.opencost.records import COMPONENT_FIELDS, USAGE_FIELDS

__all__ = ["IDLE_FIELDS", "IDLE_KEY", "MAX_USAGE", "RESOLUTION", "YEAR_HOURS", "reason"]

IDLE_KEY = "__idle__"
IDLE_FIELDS: dict[str, str] = {"gpu": "gpuCost", "cpu": "cpuCost", "ram": "ramCost"}
# When the window is not known, bound GPU-hours by what MAX_GPUS could run in a leap year.
YEAR_HOURS = 366 * 24.0
# OpenCost rounds its numbers to 5 decimals (assets and older builds print 6), so a non-zero
# cost or GPU-hour figure below 1e-9 is not something it writes. Refusing those keeps the
# maths clear of denormals: a split of idle (cost x weight / total) cannot underflow to 0 and
# lose money, and the GPU-hour price (GPU cost / GPU-hours) cannot overflow.
RESOLUTION = 1e-9
# Core-hours, byte-hours and bytes: never negative; the bound only refuses +Inf and overflow.
MAX_USAGE = 1e24


def reason(name: str, raw: Any) -> BadRecord:
    """Why a record broke the types or bounds, found by checking its fields one by one."""
    try:
        if not isinstance(raw, dict):
            raise BadRecord(WRONG_TYPE, f"allocation {name!r} is not an object")
        if name == IDLE_KEY:
            _numbers(name, raw, IDLE_FIELDS.values(), -MAX_COST, MAX_COST)
        else:
            props = raw.get("properties") or {}
            if not isinstance(props, dict):
                raise BadRecord(WRONG_TYPE, f"allocation {name!r}: properties is not an object")
            _numbers(name, raw, _COSTS, 0.0, MAX_COST)
            _numbers(name, raw, _ADJUSTMENTS, -MAX_COST, MAX_COST)
            for key in ("namespace", "node"):
                label(props.get(key, ""), f"allocation {name!r}: properties.{key}")
            for key in ("labels", "namespaceLabels"):
                _labels(name, key, props.get(key) or {})
            _numbers(name, raw, ("gpuHours",), 0.0, MAX_GPUS * YEAR_HOURS)
            _numbers(name, raw, USAGE_FIELDS.values(), 0.0, MAX_USAGE)
    except BadRecord as exc:
        return exc
    # Valid field by field but not as a whole: a number type the struct does not take.
    return BadRecord(WRONG_TYPE, f"allocation {name!r} does not have OpenCost's field types")


def _numbers(name: str, raw: dict[str, Any], keys: Iterable[str], low: float, high: float) -> None:
    for key in keys:
        what = f"allocation {name!r}: {key}"
        number(raw.get(key), what, low=low, high=high, null=0.0, tiny=RESOLUTION)


_NUMBERS = tuple(f for fields in COMPONENT_FIELDS.values() for f in fields)
_ADJUSTMENTS = tuple(f for f in _NUMBERS if f.endswith("Adjustment"))
_COSTS = tuple(f for f in _NUMBERS if f not in _ADJUSTMENTS)


def _labels(name: str, key: str, value: Any) -> None:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise BadRecord(WRONG_TYPE, f"allocation {name!r}: properties.{key} is not a map")
    for k, v in value.items():
        label(k, f"allocation {name!r}: a key of properties.{key}")
        label(v, f"allocation {name!r}: properties.{key}[{k[:60]!r}]")

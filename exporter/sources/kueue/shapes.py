"""JSON shapes of Kubernetes objects: an object, array or string (None reads as empty), else bad."""

from __future__ import annotations

from typing import Any, TypeVar

from exporter.sources.checks import WRONG_TYPE, BadRecord

__all__ = ["as_array", "as_object", "as_string", "typed"]

JsonT = TypeVar("JsonT", dict[str, Any], list[Any], str)


def typed(value: Any, kind: type[JsonT], what: str) -> JsonT:
    """`value` if it is a `kind` (an empty one if None), else BadRecord naming `what`."""
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise BadRecord(
            WRONG_TYPE, f"expected {kind.__name__} for {what}, got {type(value).__name__}"
        )
    return value


def as_object(value: Any, what: str) -> dict[str, Any]:
    """A JSON object, or BadRecord."""
    return typed(value, dict, what)


def as_array(value: Any, what: str) -> list[Any]:
    """A JSON array, or BadRecord."""
    return typed(value, list, what)


def as_string(value: Any, what: str) -> str:
    """A JSON string, or BadRecord."""
    return typed(value, str, what)

"""YAML loading that remembers the line of every key, so config errors can point at it."""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import ValidationError

from exporter.errors import ConfigError, ConfigIssue

__all__ = ["issues_from_validation", "load_yaml_with_lines"]

KeyPath = tuple[str | int, ...]


def load_yaml_with_lines(path: str, text: str) -> tuple[Any, dict[KeyPath, int]]:
    """Parse YAML safely and return the data with a map from key path to 1-based line."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(path, [ConfigIssue(line, "", f"invalid YAML: {problem}")]) from None
    lines: dict[KeyPath, int] = {}
    if node is not None:
        _walk(node, (), lines)
    return data, lines


def _walk(node: yaml.Node, at: KeyPath, lines: dict[KeyPath, int]) -> None:
    lines.setdefault(at, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            lines[(*at, key)] = key_node.start_mark.line + 1
            _walk(value_node, (*at, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*at, index)] = item.start_mark.line + 1
            _walk(item, (*at, index), lines)


def _line_for(loc: KeyPath, lines: dict[KeyPath, int]) -> int | None:
    # The deepest existing prefix: a missing key is reported at its parent's line.
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


def _key_text(loc: KeyPath) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def issues_from_validation(exc: ValidationError, lines: dict[KeyPath, int]) -> list[ConfigIssue]:
    """Turn pydantic's errors into issues that name the line and the dotted key path."""
    issues = []
    for err in exc.errors(include_url=False, include_input=False):
        # Pydantic puts the union member or validator name in loc; keep only real keys.
        loc = tuple(p for p in err["loc"] if isinstance(p, int) or not _is_internal(p))
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown key"
        message = message.removeprefix("Value error, ")
        issues.append(ConfigIssue(_line_for(loc, lines), _key_text(loc), message))
    return issues


def _is_internal(part: str) -> bool:
    return part.startswith(("function-", "tagged-union")) or part in {"nullable"}

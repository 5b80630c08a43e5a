"""YAML loading with budgets, duplicate-key checks and the line of every key, for config errors."""

from __future__ import annotations

from typing import Any, NoReturn

import yaml
from pydantic import ValidationError

from exporter.errors import ConfigError, ConfigIssue
from exporter.files import read_regular_file

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_NODES",
    "KeyedErrors",
    "issues_from_validation",
    "load_yaml_with_lines",
    "read_config_text",
]

KeyPath = tuple[str | int, ...]

# A config is a few kilobytes; these bound time and memory for any input, hostile or not.
MAX_FILE_BYTES = 1 << 20
# Nodes after alias expansion: what the validator would walk. Five thousand teams (the largest
# cluster the bench measures) fit.
MAX_NODES = 250_000
# Nesting of mappings and sequences, also after expansion; the schema needs five.
MAX_DEPTH = 32
_MERGE_TAG = "tag:yaml.org,2002:merge"


class KeyedErrors(ValueError):
    """Raised by a model validator to point at keys inside the model rather than at the model.

    Each entry is (key path relative to the model, message, key path of a related setting or
    None); the related setting's line is added to the message when the file has it.
    """

    def __init__(self, entries: list[tuple[KeyPath, str, KeyPath | None]]) -> None:
        super().__init__("; ".join(message for _, message, _ in entries))
        self.entries = entries


def read_config_text(path: str) -> str:
    """Read a config file as UTF-8 text, refusing files too big to be a config."""
    try:
        raw = read_regular_file(path, MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(path, [ConfigIssue(None, "", f"cannot read: {exc.strerror}")]) from exc
    if len(raw) > MAX_FILE_BYTES:
        message = f"the file is larger than {MAX_FILE_BYTES // 1024} KiB; this is not a config"
        raise ConfigError(path, [ConfigIssue(None, "", message)])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        byte = raw[exc.start]
        message = f"not UTF-8 text: byte 0x{byte:02x} at column {column} cannot be decoded"
        raise ConfigError(path, [ConfigIssue(line, "", message)]) from None


class _BoundedLoader(yaml.SafeLoader):
    """A SafeLoader that measures the tree as it composes it and stops at the budgets.

    Aliases are allowed (anchors for shared settings are ordinary YAML) but each one is charged
    the full size and depth of what it points at, so a "billion laughs" file fails early.
    """

    def __init__(self, path: str, text: str) -> None:
        super().__init__(text)
        self._file = path
        self._nodes = 0
        self._depth = 0
        self._deepest = 0
        self._shape: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded size, height)
        self._path: list[str | int] = []

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        """Compose one node, charging it (or the anchor an alias repeats) to the budgets."""
        part = _path_part(index)
        if part is not None:
            self._path.append(part)
        try:
            if self.check_event(yaml.AliasEvent):
                self._charge_alias(self._next_event())
                return super().compose_node(parent, index)
            return self._compose_measured(parent, index)
        finally:
            if part is not None:
                self._path.pop()

    def _compose_measured(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        mark = self._next_event().start_mark
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self._refuse(mark, f"nested deeper than {MAX_DEPTH} levels")
        self._charge(1, mark)
        nodes_before, deepest_before = self._nodes, self._deepest
        self._deepest = self._depth
        node = super().compose_node(parent, index)
        height = self._deepest - self._depth + 1
        self._deepest = max(deepest_before, self._deepest)
        self._depth -= 1
        self._shape[id(node)] = (self._nodes - nodes_before + 1, height)
        return node

    def _next_event(self) -> Any:
        return self.peek_event()  # type: ignore[no-untyped-call]

    def _charge_alias(self, event: Any) -> None:
        anchor = getattr(event, "anchor", None)
        target = self.anchors.get(anchor)
        if target is None:
            return  # the composer reports the undefined alias
        shape = self._shape.get(id(target))
        if shape is None:
            self._refuse(event.start_mark, f"alias *{anchor} refers to its own enclosing anchor")
        size, height = shape
        if self._depth + height > MAX_DEPTH:
            self._refuse(event.start_mark, f"nested deeper than {MAX_DEPTH} levels via *{anchor}")
        self._deepest = max(self._deepest, self._depth + height)
        self._charge(size, event.start_mark, f" via *{anchor}")

    def _charge(self, size: int, mark: Any, via: str = "") -> None:
        self._nodes += size
        if self._nodes > MAX_NODES:
            self._refuse(mark, f"more than {MAX_NODES} values once aliases are expanded{via}")

    def _refuse(self, mark: Any, message: str) -> NoReturn:
        issue = ConfigIssue(mark.line + 1, _key_text(tuple(self._path)), message)
        raise ConfigError(self._file, [issue])

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """Construct one value; a scalar Python cannot hold (a 30th of February) is a YAML error."""
        try:
            return super().construct_object(node, deep)
        # AttributeError: PyYAML's own bug on an explicit `!!timestamp` that is not a date.
        except (ValueError, OverflowError, TypeError, AttributeError) as exc:
            reason = "not a value of its tag" if isinstance(exc, AttributeError) else str(exc)
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read this value: {reason}", node.start_mark
            ) from None


def _path_part(index: Any) -> str | int | None:
    """The key path element of the node composed at `index` (None for the root or a key)."""
    if isinstance(index, int):
        return index
    if isinstance(index, yaml.ScalarNode):
        return str(index.value)
    return "?" if isinstance(index, yaml.Node) else None


def load_yaml_with_lines(path: str, text: str) -> tuple[Any, dict[KeyPath, int]]:
    """Parse YAML safely and return the data with a map from key path to 1-based line."""
    try:
        # The reader checks every character up front, so even the constructor can refuse.
        loader = _BoundedLoader(path, text)
    except yaml.YAMLError as exc:
        raise ConfigError(path, [_yaml_issue(exc, text, {})]) from None
    lines: dict[KeyPath, int] = {}
    try:
        node = loader.get_single_node()
        if node is None:
            return None, lines
        duplicates: list[ConfigIssue] = []
        _walk(loader, node, (), lines, duplicates, set())
        if duplicates:
            raise ConfigError(path, duplicates)
        return loader.construct_document(node), lines
    except yaml.YAMLError as exc:
        raise ConfigError(path, [_yaml_issue(exc, text, lines)]) from None
    finally:
        loader.dispose()


def _yaml_issue(exc: yaml.YAMLError, text: str, lines: dict[KeyPath, int]) -> ConfigIssue:
    if isinstance(exc, yaml.reader.ReaderError):
        at = text.count("\n", 0, int(exc.position)) + 1
        character = f"#x{exc.character:04x}" if isinstance(exc.character, int) else "a character"
        return ConfigIssue(at, "", f"invalid YAML: {character}: {exc.reason}")
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"{context}: {problem}" if context else problem
    return ConfigIssue(line, _key_on_line(line, lines), f"invalid YAML: {message}")


def _key_on_line(line: int | None, lines: dict[KeyPath, int]) -> str:
    # A constructor error has only a position; once composed, the key on that line is known.
    on_line = [loc for loc, at in lines.items() if at == line]
    return _key_text(max(on_line, key=len)) if on_line else ""


def _walk(
    loader: _BoundedLoader,
    node: yaml.Node,
    at: KeyPath,
    lines: dict[KeyPath, int],
    duplicates: list[ConfigIssue],
    checked: set[int],
) -> None:
    # Walks the expanded tree, which the composer's budgets keep small and shallow.
    lines.setdefault(at, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        if id(node) not in checked:
            checked.add(id(node))
            duplicates.extend(_duplicate_keys(loader, node, at))
        for key_node, value_node in node.value:
            key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
            lines.setdefault((*at, key), key_node.start_mark.line + 1)
            _walk(loader, value_node, (*at, key), lines, duplicates, checked)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines.setdefault((*at, index), item.start_mark.line + 1)
            _walk(loader, item, (*at, index), lines, duplicates, checked)


def _duplicate_keys(
    loader: _BoundedLoader, node: yaml.MappingNode, at: KeyPath
) -> list[ConfigIssue]:
    """Keys given twice in one mapping; YAML would silently keep the last one."""
    first_line: dict[object, int] = {}
    issues = []
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
            continue  # a merge (<<) may override on purpose; complex keys fail validation
        # Compare constructed keys: `1` and `0x1`, or `yes` and `true`, are one key.
        key = loader.construct_object(key_node)
        line = key_node.start_mark.line + 1
        if key in first_line:
            message = f"duplicate key, first given on line {first_line[key]}"
            issues.append(ConfigIssue(line, _key_text((*at, str(key_node.value))), message))
        else:
            first_line[key] = line
    return issues


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
        keyed = err.get("ctx", {}).get("error")
        if isinstance(keyed, KeyedErrors):
            issues.extend(_keyed_issues(loc, keyed, lines))
            continue
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown key"
        message = message.removeprefix("Value error, ")
        issues.append(ConfigIssue(_line_for(loc, lines), _key_text(loc), message))
    return issues


def _keyed_issues(loc: KeyPath, keyed: KeyedErrors, lines: dict[KeyPath, int]) -> list[ConfigIssue]:
    issues = []
    for inner, message, related in keyed.entries:
        if related is not None and (*loc, *related) in lines:
            message = f"{message} (line {lines[(*loc, *related)]})"
        full = (*loc, *inner)
        issues.append(ConfigIssue(_line_for(full, lines), _key_text(full), message))
    return issues


def _is_internal(part: str) -> bool:
    return part.startswith(("function-", "tagged-union")) or part in {"nullable"}

"""`--check-config.offline`: check a config's syntax and references, touching nothing else.

For CI and for a laptop outside the cluster: the full `--check-config` also reads every
secret, kubeconfig and service-account file and builds the clients, which only works where the
exporter runs. Offline, the file is parsed and validated exactly as at start (schema, durations,
one owner per identity, the cross-references between teams, models and sources), and each
reference to the outside (an environment variable, a file path) is checked for its form only:
nothing is read, no client is built, nothing connects.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from exporter.config.loader import (
    KeyPath,
    issues_from_validation,
    load_yaml_with_lines,
    read_config_text,
)
from exporter.config.schema import Config, validate_config
from exporter.config.web import WebConfig
from exporter.errors import ConfigError, ConfigIssue

__all__ = ["check_config_offline", "check_web_config_offline"]

# POSIX's portable environment variable names: anything else cannot be set from a pod spec.
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FILE_KEYS = ("api_key_file", "token_file", "ca_file", "kubeconfig")


# Each upstream's name and how to find its section in a config: the source table's rows, which
# the command line hands in (the config does not import the sources).
Sections = Mapping[str, Callable[[Config], Any]]


def check_config_offline(path: str, sections: Sections) -> Config:
    """The validated config, or ConfigError naming file, line and key of every bad reference
    in the sections of the sources `sections` names."""
    data, lines = load_yaml_with_lines(path, read_config_text(path))
    config = validate_config(path, data, lines)
    issues = _references(config, lines, sections)
    if issues:
        raise ConfigError(path, issues)
    return config


def _references(config: Config, lines: dict[KeyPath, int], sections: Sections) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    for name, section_of in sections.items():
        section = section_of(config)
        if section is None:
            continue
        for key in ("api_key_env", *_FILE_KEYS):
            value = getattr(section, key, None)
            if value is None:
                continue
            where: KeyPath = ("sources", name, key)
            problem = _env_problem(value) if key.endswith("_env") else _path_problem(value)
            if problem:
                line = lines.get(where, lines.get(where[:2]))
                issues.append(ConfigIssue(line, ".".join(map(str, where)), problem))
    return issues


def _env_problem(value: str) -> str | None:
    if _ENV_NAME.match(value):
        return None
    return f"{value[:60]!r} is not an environment variable name (letters, digits and _)"


def _path_problem(value: str) -> str | None:
    if not value.strip():
        return "an empty path names no file"
    if any(ch in value for ch in "\x00\n\r"):
        return "a path cannot hold a NUL or a line break"
    return None


def check_web_config_offline(path: str) -> None:
    """Check a web config's syntax and schema without reading its certificate or key files."""
    text = read_config_text(path)
    data, lines = load_yaml_with_lines(path, text)
    try:
        WebConfig.model_validate({} if data is None else data)
    except ValidationError as exc:
        raise ConfigError(path, issues_from_validation(exc, lines)) from None

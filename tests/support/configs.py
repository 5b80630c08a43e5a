"""Config test helpers: the first error a config file gets, checked by file, line and key."""

from __future__ import annotations

import pytest

from exporter.config.schema import load_config
from exporter.errors import ConfigError

__all__ = ["assert_first_issue"]


def assert_first_issue(path: str, line: int, key: str, message: str) -> None:
    """Loading `path` fails, and its first issue names `line` and `key` and says `message`."""
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    issue = caught.value.issues[0]
    assert (issue.line, issue.key) == (line, key)
    assert message in issue.message
    assert caught.value.lines()[0].startswith(f"{path}:{line}: ")

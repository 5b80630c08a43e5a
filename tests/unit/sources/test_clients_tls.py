"""TLS settings of the sources: a CA file that is missing or unreadable is refused up front."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from exporter.config.schema import load_config
from exporter.errors import ConfigError
from exporter.serve.wiring import build_sources
from exporter.sources.clients import tls_context


def test_a_missing_ca_file_is_a_config_error(write_config: Callable[[str], str]) -> None:
    path = write_config("sources:\n  opencost: {url: 'https://oc:9003', ca_file: /nonexistent}\n")
    with pytest.raises(ConfigError, match=r":2: sources.opencost.ca_file: ca_file /nonexistent: "):
        build_sources(load_config(path), path)


def test_an_unreadable_ca_file_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="ca_file"):
        tls_context(str(tmp_path / "missing.pem"))

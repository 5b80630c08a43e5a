"""The token file every Kueue source test authenticates with."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.sources.kueue.api_server import TOKEN


@pytest.fixture
def token_file(tmp_path: Path) -> str:
    """A service-account token file holding TOKEN, as a pod has it mounted."""
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return str(path)

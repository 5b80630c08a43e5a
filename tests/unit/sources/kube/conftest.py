"""Stand-ins for the providers' credential plugins, on the PATH of every kubeconfig test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding stand-ins for the providers' plugins (found, never run here)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("aws", "gke-gcloud-auth-plugin", "kubelogin"):
        (folder / name).write_text("#!/bin/sh\nexit 1\n")
        (folder / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    return folder

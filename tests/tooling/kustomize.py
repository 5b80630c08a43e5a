"""Render kustomizations with the machine's kubectl, or skip saying why it cannot."""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).parents[2]
BASE = ROOT / "deploy"
COMPONENTS = ROOT / "deploy" / "kubernetes" / "components"
EXAMPLE = ROOT / "examples" / "kube-prometheus-stack"
# Components came with kustomize 3.7; kubectl 1.20 (Debian bookworm's kubernetes-client)
# embeds kustomize 2.0.3, which cannot read them.
_NEEDED = (3, 7)

Doc = dict[str, Any]


@functools.cache
def _kubectl() -> str | None:
    """Why kustomize cannot run here, or None when it can."""
    if shutil.which("kubectl") is None:
        return "kubectl is not installed (the Debian package kubernetes-client provides it)"
    out = subprocess.run(
        ["kubectl", "version", "--client", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    try:
        version = json.loads(out.stdout).get("kustomizeVersion", "")
    except json.JSONDecodeError:
        version = ""
    found = re.match(r"v?(\d+)\.(\d+)", version)
    if found is None or (int(found[1]), int(found[2])) < _NEEDED:
        return (
            f"kubectl's kustomize ({version or 'unknown version'}) predates components "
            "(kustomize >= 3.7, kubectl >= 1.21; Debian bookworm's kubernetes-client is 1.20)"
        )
    return None


def need_kustomize() -> None:
    """Skip the calling test when this machine's kubectl cannot render the kustomizations."""
    reason = _kubectl()
    if reason is not None:
        pytest.skip(reason)


@functools.cache
def _render_text(path: Path) -> str:
    out = subprocess.run(
        ["kubectl", "kustomize", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, f"kubectl kustomize {path}: {out.stderr}"
    return out.stdout


def render(path: Path) -> list[Doc]:
    """The objects `kubectl kustomize path` builds (a fresh copy each call)."""
    need_kustomize()
    return [doc for doc in yaml.safe_load_all(_render_text(path.resolve())) if doc]


def one(docs: list[Doc], kind: str, name: str | None = None) -> Doc:
    """The only object of that kind (and name, if given)."""
    found = [
        d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)
    ]
    assert len(found) == 1, f"{kind} {name or ''}: {len(found)} objects"
    return found[0]

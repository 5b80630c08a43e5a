"""Render kustomizations with the pinned kubectl (or the machine's), or skip saying why not."""

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
# embeds kustomize 2.0.3, which cannot read them. `make helm` puts kubectl 1.33 (kustomize 5.6)
# beside helm, from the same pinned package; the machine's kubectl is the fallback.
_NEEDED = (3, 7)
PINNED_KUBECTL = ROOT / ".helm" / "kubectl"


@functools.cache
def kubectl() -> str:
    """The kubectl to run: the pinned one where `make helm` placed it, else the one on PATH."""
    return str(PINNED_KUBECTL) if PINNED_KUBECTL.is_file() else "kubectl"


Doc = dict[str, Any]


@functools.cache
def _kubectl() -> str | None:
    """Why kustomize cannot run here, or None when it can."""
    if shutil.which(kubectl()) is None:
        return "kubectl is not installed (`make helm` or the Debian package kubernetes-client)"
    out = subprocess.run(
        [kubectl(), "version", "--client", "-o", "json"],
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
        [kubectl(), "kustomize", str(path)],
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

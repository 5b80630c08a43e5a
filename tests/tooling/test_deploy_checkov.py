"""checkov on the deploy manifests: no failed check, and every skipped one stated in the docs.

checkov lives in a virtual environment of its own (`make tooling` builds .venv-checkov); the test
skips, saying so, where it is not installed. It scans the raw manifests the way a user would
(`checkov -d deploy -d examples`), the rendered base and example, and the Helm chart as
`helm template` renders it (defaults, the kube-prometheus-stack values, every option on),
offline.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.tooling import helm
from tests.tooling.kustomize import BASE, EXAMPLE, ROOT, need_kustomize, render

DOCS = ROOT / "docs" / "deployment.md"


def _checkov() -> str:
    found = ROOT / ".venv-checkov" / "bin" / "checkov"
    if found.is_file():
        return str(found)
    on_path = shutil.which("checkov")
    if on_path is None:
        pytest.skip("checkov is not installed (make tooling installs it in .venv-checkov)")
    return on_path


def _scan(*args: str) -> list[dict[str, Any]]:
    """checkov's JSON reports (one per framework), without contacting any server."""
    result = subprocess.run(
        [_checkov(), *args, "--skip-download", "--compact", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "BC_SKIP_MAPPING": "TRUE", "CHECKOV_NO_GUIDE": "1"},
    )
    assert result.stdout.strip(), result.stderr[-2000:]
    # One JSON document per directory scanned, one after the other.
    reports: list[dict[str, Any]] = []
    decoder, text, at = json.JSONDecoder(), result.stdout, 0
    while (at := _skip_space(text, at)) < len(text):
        found, at = decoder.raw_decode(text, at)
        reports += found if isinstance(found, list) else [found]
    return reports


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _failed(reports: list[dict[str, Any]]) -> list[str]:
    return [
        f"{r['check_type']}: {c['check_id']} {c['check_name']} ({c['resource']})"
        for r in reports
        for c in r.get("results", {}).get("failed_checks", [])
    ]


def _skipped(reports: list[dict[str, Any]]) -> set[str]:
    return {c["check_id"] for r in reports for c in r.get("results", {}).get("skipped_checks", [])}


def _documented() -> set[str]:
    """The check ids docs/deployment.md states as exceptions (its checkov table)."""
    section = DOCS.read_text(encoding="utf-8").split("## checkov", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(CKV2?_K8S_\d+)` \|", section, re.MULTILINE))


def test_the_manifests_as_a_user_scans_them_pass_every_check() -> None:
    reports = _scan("-d", "deploy", "-d", "examples", "--framework", "kubernetes")
    assert not _failed(reports), "\n".join(_failed(reports))
    assert _skipped(reports) == _documented()


@pytest.mark.parametrize("path", [BASE, EXAMPLE], ids=["base", "example"])
def test_the_rendered_manifests_pass_every_check(path: Path, tmp_path: Path) -> None:
    need_kustomize()
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(yaml.safe_dump_all(render(path)), encoding="utf-8")
    reports = _scan("-f", str(rendered), "--framework", "kubernetes")
    assert not _failed(reports), "\n".join(_failed(reports))
    assert _skipped(reports) <= _documented()


def test_every_exception_is_an_annotation_on_the_deployment_with_its_reason() -> None:
    deployment = yaml.safe_load((BASE / "kubernetes" / "deployment.yaml").read_text("utf-8"))
    skips = {
        value.split("=", 1)[0]: value.split("=", 1)[1]
        for key, value in deployment["metadata"]["annotations"].items()
        if key.startswith("checkov.io/skip")
    }
    assert set(skips) == _documented()
    assert all(len(reason) > 20 for reason in skips.values())


# The chart's renders: the defaults, kube-prometheus-stack's values, and every option on.
_CHART_VALUES = {
    "defaults": (),
    "kube-prometheus-stack": ("-f", str(helm.KUBE_PROMETHEUS_STACK)),
    "everything": (*helm.EVERYTHING, "--set", "image.digest=sha256:" + "0" * 64),
}


def test_the_rendered_chart_passes_every_check(tmp_path: Path) -> None:
    files: list[str] = []
    for name, values in _CHART_VALUES.items():
        rendered = tmp_path / f"{name}.yaml"
        rendered.write_text(yaml.safe_dump_all(helm.template(*values)), encoding="utf-8")
        files += ["-f", str(rendered)]
    reports = _scan(*files, "--framework", "kubernetes")
    assert not _failed(reports), "\n".join(_failed(reports))
    assert sum(r["summary"]["passed"] for r in reports) > 0
    assert _skipped(reports) <= _documented()


def test_the_charts_exceptions_are_annotations_with_their_reasons() -> None:
    (deployment,) = [d for d in helm.template() if d["kind"] == "Deployment"]
    skips = {
        value.split("=", 1)[0]: value.split("=", 1)[1]
        for key, value in deployment["metadata"]["annotations"].items()
        if key.startswith("checkov.io/skip")
    }
    # CKV_K8S_14 (a fixed tag) needs no skip: the chart always renders one.
    assert set(skips) == _documented() - {"CKV_K8S_14"}
    assert all(len(reason) > 20 for reason in skips.values())

"""The components carry rules/ and dashboards/ as they are, and reach kube-prometheus-stack."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from chargeback_deploy import generate
from tests.tooling.kustomize import BASE, COMPONENTS, EXAMPLE, ROOT, Doc, one, render

RULES = sorted((ROOT / "rules").glob("*.yml"))
DASHBOARDS = sorted((ROOT / "dashboards").glob("*.json"))


def _of(docs: list[Doc], kind: str) -> dict[str, Doc]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def test_the_generated_files_are_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    # Without kubectl too: a stale component is caught wherever the suite runs.
    status = generate.main(["--check"])
    assert status == 0, capsys.readouterr().err


def test_a_changed_rule_or_dashboard_is_caught(tmp_path: Path) -> None:
    for folder in ("rules", "dashboards", "deploy"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    assert generate.main(["--check", "--root", str(tmp_path)]) == 0
    rules = tmp_path / "rules" / RULES[0].name
    rules.write_text(rules.read_text().replace("for: ", "for: 1", 1), encoding="utf-8")
    assert generate.main(["--check", "--root", str(tmp_path)]) == 1
    assert generate.main(["--root", str(tmp_path)]) == 0
    (tmp_path / "dashboards" / DASHBOARDS[0].name).unlink()
    assert generate.main(["--check", "--root", str(tmp_path)]) == 1
    assert generate.main(["--root", str(tmp_path)]) == 0
    assert generate.main(["--check", "--root", str(tmp_path)]) == 0


def test_the_charts_copies_are_checked_too(tmp_path: Path) -> None:
    # The chart reads rules/, dashboards/ and the example config through copies of its own.
    for folder in ("rules", "dashboards", "deploy"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    copies = tmp_path / generate.CHART / "files"
    (copies / "rules" / RULES[0].name).write_text("groups: []\n", encoding="utf-8")
    assert generate.main(["--check", "--root", str(tmp_path)]) == 1
    assert generate.main(["--root", str(tmp_path)]) == 0
    assert (copies / "rules" / RULES[0].name).read_text() == RULES[0].read_text()
    leftover = copies / "dashboards" / "chargeback-removed.json"
    leftover.write_text("{}", encoding="utf-8")
    assert generate.main(["--check", "--root", str(tmp_path)]) == 1
    assert generate.main(["--root", str(tmp_path)]) == 0
    assert not leftover.exists()
    config = tmp_path / "deploy" / "config.example.yaml"
    config.write_text(config.read_text() + "# changed\n", encoding="utf-8")
    assert generate.main(["--check", "--root", str(tmp_path)]) == 1
    assert generate.main(["--root", str(tmp_path)]) == 0
    assert (copies / "config.yaml").read_text() == config.read_text()


def test_the_prometheus_rules_are_the_rule_files() -> None:
    rules = _of(render(EXAMPLE), "PrometheusRule")
    assert set(rules) == {generate.rule_name(path) for path in RULES}
    for path in RULES:
        groups = yaml.safe_load(path.read_text(encoding="utf-8"))["groups"]
        assert rules[generate.rule_name(path)]["spec"] == {"groups": groups}, path.name


def test_the_prometheus_rules_load_in_prometheus(tmp_path: Path) -> None:
    for name, rule in _of(render(EXAMPLE), "PrometheusRule").items():
        (tmp_path / f"{name}.yml").write_text(yaml.safe_dump(rule["spec"]), encoding="utf-8")
    files = sorted(str(p) for p in tmp_path.glob("*.yml"))
    out = subprocess.run(
        ["promtool", "check", "rules", *files], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_dashboard_configmaps_are_the_dashboards() -> None:
    configmaps = {
        name: cm
        for name, cm in _of(render(EXAMPLE), "ConfigMap").items()
        if cm["metadata"].get("labels", {}).get("grafana_dashboard") == "1"
    }
    assert set(configmaps) == {generate.dashboard_configmap_name(p) for p in DASHBOARDS}
    for path in DASHBOARDS:
        configmap = configmaps[generate.dashboard_configmap_name(path)]
        text = path.read_text(encoding="utf-8")
        assert configmap["data"] == {path.name: text}, path.name
        assert json.loads(configmap["data"][path.name])["uid"] == json.loads(text)["uid"]
        assert configmap["metadata"]["namespace"] == "monitoring"


def test_only_the_components_add_operator_objects_and_dashboards() -> None:
    base = render(BASE)
    assert not [d for d in base if d["apiVersion"].startswith("monitoring.coreos.com/")]
    assert not [d for d in base if "grafana_dashboard" in d["metadata"].get("labels", {})]


def test_the_service_monitor_scrapes_the_service_as_the_rules_expect() -> None:
    docs = render(EXAMPLE)
    monitor = one(docs, "ServiceMonitor")
    service = one(docs, "Service")
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    # job = the value of the Service label jobLabel names: the rules select that job.
    job = service["metadata"]["labels"][monitor["spec"]["jobLabel"]]
    assert all(f'job="{job}"' in p.read_text() for p in RULES if "rules" in p.name)
    assert monitor["metadata"]["namespace"] == service["metadata"]["namespace"]


def test_the_release_label_is_set_in_one_place_of_an_overlay(tmp_path: Path) -> None:
    overlay = yaml.safe_load((EXAMPLE / "kustomization.yaml").read_text(encoding="utf-8"))
    (patch,) = overlay["patches"]
    release = yaml.safe_load(patch["patch"])[0]["value"]
    labelled = [d for d in render(EXAMPLE) if d["apiVersion"].startswith("monitoring.coreos.com/")]
    assert {d["metadata"]["labels"]["release"] for d in labelled} == {release}
    assert {d["kind"] for d in labelled} == {"ServiceMonitor", "PrometheusRule"}
    # Another release name: the same overlay with only the patch's value changed.
    # Kustomize takes relative paths only.
    overlay["resources"] = [os.path.relpath(BASE, tmp_path)]
    overlay["components"] = [os.path.relpath(p, tmp_path) for p in sorted(COMPONENTS.iterdir())]
    patch["patch"] = patch["patch"].replace(f"value: {release}", "value: monitoring-stack")
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(overlay), encoding="utf-8")
    labelled = [d for d in render(tmp_path) if d["apiVersion"].startswith("monitoring.coreos.com/")]
    assert {d["metadata"]["labels"]["release"] for d in labelled} == {"monitoring-stack"}
    assert len(labelled) == len(RULES) + 1

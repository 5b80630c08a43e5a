"""Deployment manifests: they parse, the shipped config validates, the ports agree."""

from __future__ import annotations

from pathlib import Path

import yaml

from exporter.cli import DEFAULT_LISTEN
from exporter.config import validate_config
from exporter.config_yaml import load_yaml_with_lines

DEPLOY = Path(__file__).parent.parent / "deploy" / "kubernetes"


def _documents() -> dict[str, dict[str, object]]:
    docs = {}
    for path in sorted(DEPLOY.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            docs[f"{doc['kind']}/{path.name}"] = doc
    return docs


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    manifests = {p.name for p in DEPLOY.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == manifests


def test_shipped_config_is_valid() -> None:
    configmap = _documents()["ConfigMap/configmap.yaml"]
    text = configmap["data"]["config.yaml"]  # type: ignore[index]
    data, lines = load_yaml_with_lines("configmap.yaml", text)
    config = validate_config("configmap.yaml", data, lines)
    assert config.sources.litellm is not None and config.sources.litellm.api_key_file


def test_ports_agree_with_the_default_listen_address() -> None:
    port = int(DEFAULT_LISTEN.rsplit(":", 1)[1])
    deployment = _documents()["Deployment/deployment.yaml"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]  # type: ignore[index]
    assert container["ports"][0]["containerPort"] == port
    service = _documents()["Service/service.yaml"]
    assert service["spec"]["ports"][0]["port"] == port  # type: ignore[index]


def test_the_cluster_role_grants_exactly_what_the_code_reads() -> None:
    docs = list(yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text(encoding="utf-8")))
    (role,) = [d for d in docs if d["kind"] == "ClusterRole"]
    assert role["rules"] == [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["get", "list"]}
    ]

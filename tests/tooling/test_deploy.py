"""The kustomize base: it renders valid Kubernetes, locked down, agreeing with the code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

from exporter import __version__
from exporter.cli import DEFAULT_LISTEN
from exporter.config.schema import load_config
from tests.tooling.kustomize import BASE, EXAMPLE, ROOT, Doc, one, render

KUBERNETES = BASE / "kubernetes"
CONFIG = BASE / "config.example.yaml"
# The oldest Kubernetes minor the manifests promise to fit, and the newest schemas we have.
SCHEMA_VERSIONS = ("1.27", kubernetes_validate.latest_version())
# Kinds served by Kubernetes itself; the Prometheus Operator's CRDs are checked by their own tests.
CORE_GROUPS = (
    "v1",
    "apps/v1",
    "rbac.authorization.k8s.io/v1",
    "policy/v1",
    "networking.k8s.io/v1",
)


def _container(docs: list[Doc]) -> dict[str, Any]:
    deployment = one(docs, "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container  # type: ignore[no-any-return]


def test_the_base_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((BASE / "kustomization.yaml").read_text(encoding="utf-8"))
    manifests = {f"kubernetes/{p.name}" for p in KUBERNETES.glob("*.yaml")}
    assert set(kustomization["resources"]) == manifests


@pytest.mark.parametrize("path", [BASE, EXAMPLE], ids=["base", "example"])
def test_every_core_object_validates_against_the_kubernetes_schemas(path: Path) -> None:
    docs = render(path)
    core = [d for d in docs if d["apiVersion"] in CORE_GROUPS]
    assert {d["kind"] for d in core} >= {
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "Service",
        "Deployment",
        "PodDisruptionBudget",
        "NetworkPolicy",
    }
    for doc in core:
        for version in SCHEMA_VERSIONS:
            # strict: a misspelt or misplaced field is an error, not silently dropped.
            kubernetes_validate.validate(doc, version, strict=True)
    assert {d["apiVersion"] for d in docs} - set(CORE_GROUPS) <= {"monitoring.coreos.com/v1"}


def test_a_broken_manifest_fails_the_schema_check() -> None:
    # The check above can fail: a field in the wrong place is refused.
    deployment = one(render(BASE), "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["readOnlyRootFS"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, SCHEMA_VERSIONS[0], strict=True)


def test_the_configmap_is_built_from_the_example_config() -> None:
    docs = render(BASE)
    configmap = one(docs, "ConfigMap")
    assert configmap["data"] == {"config.yaml": CONFIG.read_text(encoding="utf-8")}
    volumes = one(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]
    # The hashed name: a changed config rolls the pods.
    assert {"name": "config", "configMap": {"name": configmap["metadata"]["name"]}} in volumes
    mounts = {m["name"]: m["mountPath"] for m in _container(docs)["volumeMounts"]}
    assert _container(docs)["args"] == [f"--config.file={mounts['config']}/config.yaml"]


def test_the_litellm_key_comes_from_a_secret_mounted_where_the_config_reads_it() -> None:
    docs = render(BASE)
    litellm = load_config(str(CONFIG)).sources.litellm
    assert litellm is not None and litellm.api_key_file and litellm.api_key_env is None
    volumes = {v["name"]: v for v in one(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]}
    for mount in _container(docs)["volumeMounts"]:
        secret = volumes[mount["name"]].get("secret")
        if secret is None:
            continue
        (item,) = secret["items"]
        assert f"{mount['mountPath']}/{item['path']}" == litellm.api_key_file
        assert (secret["secretName"], item["key"]) == ("gpu-chargeback-exporter-litellm", "api-key")
        assert mount["readOnly"] is True
        return
    raise AssertionError("no Secret volume mounted")


def test_ports_probes_and_selectors_agree() -> None:
    docs = render(BASE)
    port = int(DEFAULT_LISTEN.rsplit(":", 1)[1])
    container = _container(docs)
    assert container["ports"] == [{"name": "metrics", "containerPort": port}]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    service = one(docs, "Service")
    assert service["spec"]["ports"] == [{"name": "metrics", "port": port, "targetPort": "metrics"}]
    pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()


def test_the_pod_is_locked_down() -> None:
    docs = render(BASE)
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    container = _container(docs)
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    # The same user as the image, so files the image owns and the pod's user agree.
    user = re.search(r"^USER (\d+)", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert user is not None and pod["securityContext"]["runAsUser"] == int(user[1]) != 0
    context = container["securityContext"]
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context.get("privileged", False) is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    resources = container["resources"]
    assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}


def test_the_service_account_is_bound_where_the_pod_runs() -> None:
    docs = render(BASE)
    account = one(docs, "ServiceAccount")
    deployment = one(docs, "Deployment")
    assert (
        deployment["spec"]["template"]["spec"]["serviceAccountName"]
        == (account["metadata"]["name"])
    )
    binding = one(docs, "ClusterRoleBinding")
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": account["metadata"]["name"],
            "namespace": deployment["metadata"]["namespace"],
        }
    ]
    assert binding["roleRef"]["name"] == one(docs, "ClusterRole")["metadata"]["name"]


def test_the_image_is_named_in_one_place() -> None:
    kustomization = yaml.safe_load((BASE / "kustomization.yaml").read_text(encoding="utf-8"))
    (image,) = kustomization["images"]
    assert image["newTag"] == __version__
    reference = f"{image['newName']}:{image['newTag']}"
    assert _container(render(BASE))["image"] == reference
    assert _container(render(EXAMPLE))["image"] == reference
    manifests = [*BASE.rglob("*.yaml"), *EXAMPLE.rglob("*.yaml")]
    naming = {p.relative_to(ROOT) for p in manifests if image["newName"] in p.read_text()}
    # One place per way of installing: the Helm chart's values name it too (test_helm.py
    # checks the two agree, and the chart's appVersion is the same version).
    chart_values = Path("deploy/helm/gpu-chargeback-exporter/values.yaml")
    assert naming == {Path("deploy/kustomization.yaml"), chart_values}
    # `make image` builds the same name (its tag is the package version, as asserted above).
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"IMAGE ?= {image['newName']}:$(VERSION)" in makefile


@pytest.mark.parametrize("path", [BASE, EXAMPLE], ids=["base", "example"])
def test_an_ha_pair_that_a_drain_cannot_take_down(path: Path) -> None:
    docs = render(path)
    deployment = one(docs, "Deployment")
    replicas = deployment["spec"]["replicas"]
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    budget = one(docs, "PodDisruptionBudget")["spec"]
    assert replicas == 2
    assert budget["selector"]["matchLabels"].items() <= pod_labels.items()
    # One may go, one stays: a budget of 2 would block every drain.
    assert 1 <= budget["minAvailable"] < replicas
    spread = deployment["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    (term,) = spread["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"


def _admits(rule: dict[str, Any], port: int | str, namespace: str | None) -> bool:
    """Whether an egress rule lets TCP to `port` out towards `namespace` (None: outside)."""
    if not any(p["port"] == port and p.get("protocol", "TCP") == "TCP" for p in rule["ports"]):
        return False
    if "to" not in rule:
        return True
    for peer in rule["to"]:
        if "podSelector" in peer:
            continue  # only some pods of the namespace
        names = peer.get("namespaceSelector", {}).get("matchLabels", {})
        if namespace is not None and names == {"kubernetes.io/metadata.name": namespace}:
            return True
    return False


def test_the_network_policy_admits_scrapes_and_every_upstream_of_the_example_config() -> None:
    docs = render(EXAMPLE)
    policy = one(docs, "NetworkPolicy")["spec"]
    pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert policy["podSelector"]["matchLabels"].items() <= pod_labels.items()
    assert sorted(policy["policyTypes"]) == ["Egress", "Ingress"]
    (scrapes,) = policy["ingress"]
    assert scrapes["ports"] == [{"port": "metrics", "protocol": "TCP"}]
    (prometheus,) = scrapes["from"]
    assert prometheus["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "prometheus"}
    # The ServiceMonitor's Prometheus picks the same port by name.
    endpoints = one(docs, "ServiceMonitor")["spec"]["endpoints"]
    assert [e["port"] for e in endpoints] == ["metrics"]
    egress = policy["egress"]
    assert any(_admits(rule, 53, None) for rule in egress), "DNS"
    config = load_config(str(CONFIG))
    urls: list[str] = []
    for name in ("opencost", "litellm"):
        section = getattr(config.sources, name)
        urls += [section.url] if section is not None else []
    if config.sources.dcgm is not None:
        urls += list(config.sources.dcgm.urls or ())
    if config.sources.kueue is not None:
        assert config.sources.kueue.in_cluster
        assert any(_admits(rule, 443, None) for rule in egress), "the Kubernetes API"
    assert len(urls) == 3
    for url in urls:
        parsed = urlsplit(url)
        host, port = parsed.hostname or "", parsed.port or 80
        # `service.namespace` is a Service in that namespace; anything else is outside.
        parts = host.split(".")
        namespace = parts[1] if len(parts) == 2 else None
        assert any(_admits(rule, port, namespace) for rule in egress), f"{url} is not let out"

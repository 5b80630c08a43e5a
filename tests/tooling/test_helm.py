"""The Helm chart: it lints strictly, renders the kustomize objects, and its values are checked.

`helm template` is compared object by object with `kubectl kustomize`: the base with the chart's
defaults, the kube-prometheus-stack overlay with values-kube-prometheus-stack.yaml, and
deploy/dcgm-discovery with dcgmDiscovery.enabled. Whatever differs is in INTENDED, with why.
"""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

from exporter import __version__, cli
from tests.tooling.helm import (
    CHART,
    EVERYTHING,
    KUBE_PROMETHEUS_STACK,
    run,
    template,
    template_text,
)
from tests.tooling.kustomize import BASE, EXAMPLE, ROOT, Doc, one, render

DCGM_DISCOVERY = ROOT / "deploy" / "dcgm-discovery"
_INSTANCE = "app.kubernetes.io~1instance"
# (kind, path, why): every way the chart's objects may differ from kustomize's. A path is the
# field's keys joined by "/" ("~1" stands for a "/" inside a key), as a glob.
INTENDED: tuple[tuple[str, str, str], ...] = (
    *(
        ("*", f"metadata/labels/{key}", "Helm's recommended labels on every object")
        for key in (
            _INSTANCE,
            "app.kubernetes.io~1version",
            "app.kubernetes.io~1managed-by",
            "helm.sh~1chart",
        )
    ),
    ("*", f"spec/*{_INSTANCE}", "selectors add the release, so two releases never mix pods"),
    (
        "Deployment",
        "spec/template/metadata/annotations",
        "checksum/config rolls the pods on a config change (kustomize: a hashed ConfigMap name)",
    ),
    (
        "Deployment",
        "metadata/annotations/checkov.io~1skip1",
        "the digest is pinned with the value image.digest rather than the kustomization",
    ),
    (
        "Deployment",
        "metadata/annotations/checkov.io~1skip4",
        "CKV_K8S_14 passes: the chart always renders a tag (the chart's appVersion by default)",
    ),
)
# Kustomize names the config's ConfigMap with a hash of its content; the chart does not.
_HASHED = re.compile(r"^(?P<name>gpu-chargeback-exporter)-[a-z0-9]{10}$")


def _key(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _diff(ours: Any, theirs: Any, path: str = "") -> set[str]:
    """The paths where two documents differ (a key on one side only counts once, at its path)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        found: set[str] = set()
        for key in ours.keys() | theirs.keys():
            at = f"{path}/{_key(key)}".lstrip("/")
            found |= _diff(ours[key], theirs[key], at) if key in ours and key in theirs else {at}
        return found
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return set().union(
            *(_diff(a, b, f"{path}/{i}") for i, (a, b) in enumerate(zip(ours, theirs, strict=True)))
        )
    return set() if ours == theirs else {path}


def _plain_configmap_name(docs: list[Doc]) -> list[Doc]:
    """Kustomize's objects with the config's ConfigMap under its unhashed name."""
    text = yaml.safe_dump_all(docs)
    for doc in docs:
        found = _HASHED.match(doc["metadata"]["name"]) if doc["kind"] == "ConfigMap" else None
        if found is not None:
            text = text.replace(found[0], found["name"])
    return [doc for doc in yaml.safe_load_all(text) if doc]


def _by_object(docs: list[Doc]) -> dict[tuple[str, str, str], Doc]:
    def key(doc: Doc) -> tuple[str, str, str]:
        meta = doc["metadata"]
        return (doc["kind"], meta.get("namespace", ""), meta["name"])

    keyed = {key(doc): doc for doc in docs}
    assert len(keyed) == len(docs), "two objects of the same kind, namespace and name"
    return keyed


def _unintended(chart: list[Doc], kustomize: list[Doc]) -> tuple[list[str], set[int]]:
    """Each difference no INTENDED entry explains, and which entries explained some."""
    ours, theirs = _by_object(chart), _by_object(_plain_configmap_name(kustomize))
    assert set(ours) == set(theirs), (set(ours) - set(theirs), set(theirs) - set(ours))
    unexplained, used = [], set()
    for key, doc in sorted(ours.items()):
        for path in sorted(_diff(doc, theirs[key])):
            hits = {
                i
                for i, (kind, pattern, _) in enumerate(INTENDED)
                if fnmatch.fnmatchcase(key[0], kind) and fnmatch.fnmatchcase(path, pattern)
            }
            used |= hits
            if not hits:
                unexplained.append(f"{'/'.join(key)}: {path}")
    return unexplained, used


def test_the_defaults_render_the_kustomize_base() -> None:
    unexplained, _ = _unintended(template(), render(BASE))
    assert not unexplained, "\n".join(unexplained)


def test_the_kube_prometheus_stack_values_render_the_overlay() -> None:
    unexplained, used = _unintended(template("-f", str(KUBE_PROMETHEUS_STACK)), render(EXAMPLE))
    assert not unexplained, "\n".join(unexplained)
    # Every listed difference is real: none is left over from an older chart.
    unused = [entry for i, entry in enumerate(INTENDED) if i not in used]
    assert not unused, unused


def test_dcgm_discovery_renders_its_kustomization() -> None:
    chart = template("--set", "dcgmDiscovery.enabled=true")
    unexplained, _ = _unintended(chart, [*render(BASE), *render(DCGM_DISCOVERY)])
    assert not unexplained, "\n".join(unexplained)


@pytest.mark.parametrize(
    "values",
    [(), ("-f", str(KUBE_PROMETHEUS_STACK)), EVERYTHING],
    ids=["base", "kps", "everything"],
)
def test_the_chart_lints_strictly(values: tuple[str, ...]) -> None:
    out = run("lint", "--strict", str(CHART), *values)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 chart(s) failed" in out.stdout


def _everything_on() -> list[Doc]:
    return template(*EVERYTHING)


def test_another_release_name_prefixes_the_names_and_keeps_the_job() -> None:
    out = run("template", "billing", str(CHART), "-n", "finops", "-f", str(KUBE_PROMETHEUS_STACK))
    assert out.returncode == 0, out.stderr
    docs = [doc for doc in yaml.safe_load_all(out.stdout) if doc]
    assert all(d["metadata"]["name"].startswith("billing-gpu-chargeback-exporter") for d in docs)
    service, monitor = one(docs, "Service"), one(docs, "ServiceMonitor")
    # job = the Service's value of the monitor's jobLabel: what the rules select.
    assert service["metadata"]["labels"][monitor["spec"]["jobLabel"]] == "gpu-chargeback-exporter"
    assert monitor["spec"]["selector"]["matchLabels"]["app.kubernetes.io/instance"] == "billing"
    (subject,) = one(docs, "ClusterRoleBinding")["subjects"]
    assert subject["namespace"] == "finops"


def test_every_core_object_validates_against_the_kubernetes_schemas() -> None:
    for doc in _everything_on():
        if doc["apiVersion"] == "monitoring.coreos.com/v1":
            continue  # the CRDs' objects: compared with the overlay's above
        for version in ("1.27", kubernetes_validate.latest_version()):
            kubernetes_validate.validate(doc, version, strict=True)


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("replicas=two", "replicas"),
        ("replicas=0", "replicas"),
        ("image.digest=latest", "digest"),
        ("litellm.existingSecret=My_Key", "existingSecret"),
        ("serviceMonitor.interval=soon", "interval"),
        ("extraArgs[0]=debug", "extraArgs"),
        ("podDisruptionBudget.minAvailabel=1", "minAvailabel"),
        ("litellm.apiKey=sk-1234", "apiKey"),
        ("serviceMonitor.endpoint.interval=5s", "endpoint"),
    ],
)
def test_the_schema_refuses_a_bad_value(setting: str, named: str) -> None:
    # A secret as a value is refused too (litellm.apiKey): the chart takes Secret names only.
    out = template_text("--set", setting)
    assert out.returncode != 0
    assert "values don't meet the specifications of the schema" in out.stderr
    assert named in out.stderr
    assert "sk-1234" not in out.stdout


def test_a_budget_that_would_block_every_drain_is_refused() -> None:
    out = template_text("--set", "replicas=1")
    assert out.returncode != 0
    assert "podDisruptionBudget.minAvailable must be below replicas" in out.stderr
    single = template("--set", "replicas=1,podDisruptionBudget.enabled=false")
    assert not [d for d in single if d["kind"] == "PodDisruptionBudget"]
    assert one(single, "Deployment")["spec"]["replicas"] == 1


def test_tls_or_basic_auth_without_the_web_config_is_refused() -> None:
    # Probes switched to HTTPS, or the flag, with no web config to serve them: a pod never ready.
    for setting in ("webConfig.tls=true", "webConfig.basicAuth=true"):
        out = template_text("--set", setting)
        assert out.returncode != 0
        assert "name that Secret" in out.stderr


def test_the_config_value_is_the_configmap_and_rolls_the_pods(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("currency: EUR\nteams: []\n", encoding="utf-8")
    docs = template("--set-file", f"config={config}")
    assert one(docs, "ConfigMap")["data"] == {"config.yaml": "currency: EUR\nteams: []\n"}
    rolled = one(docs, "Deployment")["spec"]["template"]["metadata"]["annotations"]
    default = one(template(), "Deployment")["spec"]["template"]["metadata"]["annotations"]
    assert rolled["checksum/config"] != default["checksum/config"]


def _container(docs: list[Doc]) -> dict[str, Any]:
    (container,) = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    return container  # type: ignore[no-any-return]


def test_basic_auth_keeps_the_probes_answering_and_tls_switches_them_to_https() -> None:
    docs = _everything_on()
    container = _container(docs)
    assert container["args"] == [
        "--config.file=/etc/gpu-chargeback-exporter/config.yaml",
        "--web.config.file=/var/run/secrets/gpu-chargeback-exporter/web/web-config.yml",
        "--web.healthz-without-auth",
    ]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["scheme"] == "HTTPS"
    volumes = {v["name"]: v for v in one(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]}
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    for name, secret in (("web-config", "web"), ("web-tls", "tls")):
        assert volumes[name]["secret"]["secretName"] == secret
        assert mounts[name]["readOnly"] is True
    # TLS without basic auth: no flag; neither: no web config at all.
    tls_only = template("--set", "webConfig.existingSecret=web,webConfig.tls=true")
    assert "--web.healthz-without-auth" not in _container(tls_only)["args"]
    assert _container(template())["args"] == [
        "--config.file=/etc/gpu-chargeback-exporter/config.yaml"
    ]


def test_every_flag_the_chart_passes_is_one_the_exporter_accepts() -> None:
    # The chart and the command line change apart: a renamed flag would make every pod exit 2.
    for docs in (_everything_on(), template()):
        args = _container(docs)["args"]
        parsed = cli._parser().parse_args(args)
        assert parsed.config_file == "/etc/gpu-chargeback-exporter/config.yaml"


def test_no_secret_value_is_rendered() -> None:
    # Secrets by reference only: the chart renders no Secret object at all.
    assert not [d for d in _everything_on() if d["kind"] == "Secret"]


def test_the_chart_versions_and_image_follow_the_package() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    assert chart["version"] == chart["appVersion"] == __version__
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    kustomization = yaml.safe_load((BASE / "kustomization.yaml").read_text(encoding="utf-8"))
    (image,) = kustomization["images"]
    assert values["image"]["repository"] == image["newName"]
    assert _container(template())["image"] == f"{image['newName']}:{__version__}"


def test_the_schema_lists_every_value() -> None:
    # additionalProperties: false everywhere a value is a fixed set of keys, so values.yaml
    # and the schema cannot drift apart unnoticed.
    schema = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    assert set(values) == set(schema["properties"]) - {"global"}
    for key, value in values.items():
        part = schema["properties"][key]
        if isinstance(value, dict) and part.get("additionalProperties") is False:
            assert set(value) == set(part["properties"]), key


def test_the_readmes_helm_install_renders(tmp_path: Path) -> None:
    # The one line the README gives, with `template` for `install` and the example config.
    (line,) = [
        line
        for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("helm install ")
    ]
    args = line.split()[2:]
    config = tmp_path / "config.yaml"
    config.write_text((BASE / "config.example.yaml").read_text(encoding="utf-8"), "utf-8")
    args = [re.sub(r"^config=config\.yaml$", f"config={config}", a) for a in args]
    out = run("template", *args)
    assert out.returncode == 0, out.stderr
    kinds = {doc["kind"] for doc in yaml.safe_load_all(out.stdout) if doc}
    assert {"Deployment", "ServiceMonitor", "PrometheusRule", "ConfigMap"} <= kinds

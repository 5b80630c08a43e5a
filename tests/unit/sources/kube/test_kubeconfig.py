"""kubeconfigs as the providers write them (EKS, GKE, AKS, kind), and every error at its line."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
import trustme
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exporter.cli import main
from exporter.errors import ConfigError
from exporter.sources.kube.kubeconfig import Kubeconfig, load
from tests.conftest import CLOCK
from tests.support.properties import examples

CA = trustme.CA()
CA_PEM = CA.cert_pem.bytes()
CA_DATA = base64.b64encode(CA_PEM).decode()

# As `aws eks update-kubeconfig --name prod --region eu-west-1 --profile finance` writes it.
EKS = f"""\
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {CA_DATA}
    server: https://0123456789ABCDEF0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com
  name: arn:aws:eks:eu-west-1:111122223333:cluster/prod
contexts:
- context:
    cluster: arn:aws:eks:eu-west-1:111122223333:cluster/prod
    user: arn:aws:eks:eu-west-1:111122223333:cluster/prod
  name: arn:aws:eks:eu-west-1:111122223333:cluster/prod
current-context: arn:aws:eks:eu-west-1:111122223333:cluster/prod
kind: Config
preferences: {{}}
users:
- name: arn:aws:eks:eu-west-1:111122223333:cluster/prod
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - --region
      - eu-west-1
      - eks
      - get-token
      - --cluster-name
      - prod
      - --output
      - json
      command: aws
      env:
      - name: AWS_PROFILE
        value: finance
"""

# As `gcloud container clusters get-credentials` writes it (with the plugin installed).
GKE = f"""\
apiVersion: v1
kind: Config
current-context: gke_acme-ml_europe-west4_training
clusters:
- name: gke_acme-ml_europe-west4_training
  cluster:
    server: https://34.90.1.2
    certificate-authority-data: {CA_DATA}
contexts:
- name: gke_acme-ml_europe-west4_training
  context:
    cluster: gke_acme-ml_europe-west4_training
    user: gke_acme-ml_europe-west4_training
users:
- name: gke_acme-ml_europe-west4_training
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following
        https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin
      provideClusterInfo: true
      interactiveMode: IfAvailable
"""

# As `kind create cluster` writes it: everything inline.
KIND = f"""\
apiVersion: v1
kind: Config
clusters:
- cluster: {{certificate-authority-data: {CA_DATA}, server: "https://127.0.0.1:40111"}}
  name: kind-kind
contexts:
- context: {{cluster: kind-kind, user: kind-kind}}
  name: kind-kind
current-context: kind-kind
users:
- name: kind-kind
  user:
    client-certificate-data: {{cert}}
    client-key-data: {{key}}
"""


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


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_an_eks_kubeconfig_runs_aws_eks_get_token(tmp_path: Path, plugins: Path) -> None:
    config = load(write(tmp_path, EKS), allow_insecure=False)
    assert config.server.endswith(".gr7.eu-west-1.eks.amazonaws.com")
    assert config.ca is not None and config.ca[1] == CA_PEM and config.ca[0].line == 4
    spec = config.exec
    assert spec is not None
    assert spec.command == str(plugins / "aws")
    assert spec.args == (*["--region", "eu-west-1", "eks", "get-token"], "--cluster-name", "prod",
                         "--output", "json")  # fmt: skip
    assert spec.env == (("AWS_PROFILE", "finance"),)
    assert spec.api_version == "client.authentication.k8s.io/v1beta1"
    assert spec.user == "arn:aws:eks:eu-west-1:111122223333:cluster/prod"
    assert spec.cluster is None  # provideClusterInfo not set
    assert config.token is None and config.cert is None


def test_a_gke_kubeconfig_gives_the_plugin_the_cluster(tmp_path: Path, plugins: Path) -> None:
    config = load(write(tmp_path, GKE), allow_insecure=False)
    spec = config.exec
    assert spec is not None and spec.command == str(plugins / "gke-gcloud-auth-plugin")
    assert spec.cluster == {"server": "https://34.90.1.2", "certificate-authority-data": CA_DATA}


def test_a_missing_plugin_is_named_with_its_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    with pytest.raises(ConfigError) as caught:
        load(write(tmp_path, GKE), allow_insecure=False)
    (line,) = caught.value.lines()
    assert ":19: users[0].user.exec.command: 'gke-gcloud-auth-plugin' is not an executable" in line
    assert "cluster-access-for-kubectl#install_plugin" in line


def test_kind_inline_client_certificate_and_key(tmp_path: Path) -> None:
    client = CA.issue_cert("kind-admin")
    cert = base64.b64encode(client.cert_chain_pems[0].bytes()).decode()
    key = base64.b64encode(client.private_key_pem.bytes()).decode()
    config = load(
        write(tmp_path, KIND.replace("{cert}", cert).replace("{key}", key)), allow_insecure=False
    )
    assert config.cert is not None and config.cert[1] == client.cert_chain_pems[0].bytes()
    assert config.key is not None and config.key[1] == client.private_key_pem.bytes()
    assert config.key[0].key == "users[0].user.client-key-data" and config.key[0].line == 14


def test_files_are_relative_to_the_kubeconfig(tmp_path: Path) -> None:
    text = (
        "current-context: c\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
        "clusters: [{name: k, cluster: {server: 'https://k', certificate-authority: ca.crt}}]\n"
        "users: [{name: u, user: {tokenFile: secrets/token}}]\n"
    )
    config = load(write(tmp_path, text), allow_insecure=False)
    assert config == Kubeconfig(
        "https://k",
        ca=(config.ca[0] if config.ca else None, str(tmp_path / "ca.crt")),  # type: ignore[arg-type]
        token_file=str(tmp_path / "secrets" / "token"),
    )


def _one_context(cluster: str, user: str) -> str:
    return (
        "current-context: c\n"
        "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
        f"clusters:\n- name: k\n  cluster:\n{cluster}"
        f"users:\n- name: u\n  user:\n{user}"
    )


SERVER = "    server: https://k:6443\n"
TOKEN = "    token: a-long-enough-token\n"
EXEC_V1 = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: kubelogin\n"

# (kubeconfig text, the line, the key, a piece of the message)
BAD = {
    "contexts a number": (
        "current-context: c\ncontexts: 5\n",
        2,
        "contexts",
        "must be a list of named contexts, not a number",
    ),
    "no current context": ("contexts: []\n", 1, "current-context", "is required"),
    "unknown context": (
        "current-context: x\ncontexts:\n- {name: c, context: {}}\n",
        2,
        "contexts",
        "no context named 'x'",
    ),
    "context not a mapping": (
        "current-context: c\ncontexts:\n- name: c\n  context: [a]\n",
        4,
        "contexts[0].context",
        "must be a mapping, not a list",
    ),
    "server missing": (
        _one_context("    {}\n", TOKEN),
        7,
        "clusters[0].cluster.server",
        "required",
    ),
    "server a number": (
        _one_context("    server: 6443\n", TOKEN),
        8,
        "clusters[0].cluster.server",
        "must be a string, not a number",
    ),
    "insecure": (
        _one_context(SERVER + "    insecure-skip-tls-verify: true\n", TOKEN),
        9,
        "clusters[0].cluster.insecure-skip-tls-verify",
        "refused",
    ),
    "insecure as text": (
        _one_context(SERVER + "    insecure-skip-tls-verify: 'yes'\n", TOKEN),
        9,
        "clusters[0].cluster.insecure-skip-tls-verify",
        "must be true or false, not a string",
    ),
    "bad base64": (
        _one_context(SERVER + "    certificate-authority-data: not*base64\n", TOKEN),
        9,
        "clusters[0].cluster.certificate-authority-data",
        "not base64",
    ),
    "both CA forms": (
        _one_context(
            SERVER
            + f"    certificate-authority: ca.crt\n    certificate-authority-data: {CA_DATA}\n",
            TOKEN,
        ),
        10,
        "clusters[0].cluster.certificate-authority-data",
        "only one of certificate-authority and certificate-authority-data",
    ),
    "tls-server-name": (
        _one_context(SERVER + "    tls-server-name: api.internal\n", TOKEN),
        9,
        "clusters[0].cluster.tls-server-name",
        "not supported",
    ),
    "gcp auth-provider": (
        _one_context(SERVER, "    auth-provider:\n      name: gcp\n      config: {}\n"),
        12,
        "users[0].user.auth-provider",
        "gke-gcloud-auth-plugin",
    ),
    "azure auth-provider": (
        _one_context(SERVER, "    auth-provider: {name: azure}\n"),
        12,
        "users[0].user.auth-provider",
        "kubelogin",
    ),
    "token and exec": (
        _one_context(SERVER, TOKEN + EXEC_V1 + "      interactiveMode: Never\n"),
        13,
        "users[0].user.exec",
        "only one of token, exec",
    ),
    "half a pair": (
        _one_context(SERVER, f"    client-certificate-data: {CA_DATA}\n"),
        11,
        "users[0].user",
        "client-key (or client-key-data) is required",
    ),
    "v1 without interactiveMode": (
        _one_context(SERVER, EXEC_V1),
        12,
        "users[0].user.exec.interactiveMode",
        "is required with client.authentication.k8s.io/v1",
    ),
    "interactive always": (
        _one_context(SERVER, EXEC_V1 + "      interactiveMode: Always\n"),
        15,
        "users[0].user.exec.interactiveMode",
        "needs a terminal",
    ),
    "v1alpha1": (
        _one_context(
            SERVER,
            "    exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: kubelogin}\n",
        ),
        12,
        "users[0].user.exec.apiVersion",
        "must be one of",
    ),
    "args not strings": (
        _one_context(
            SERVER, EXEC_V1 + "      interactiveMode: Never\n      args: [get-token, 5]\n"
        ),
        16,
        "users[0].user.exec.args[1]",
        "must be a string, not a number",
    ),
    "env without name": (
        _one_context(SERVER, EXEC_V1 + "      interactiveMode: Never\n      env: [{value: x}]\n"),
        16,
        "users[0].user.exec.env[0].name",
        "is required",
    ),
    "not YAML": ("current-context: [\n", 2, "", "invalid YAML"),
    "a list": ("- a\n", 1, "(top level)", "must be a mapping, not a list"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_every_error_names_file_line_and_key(tmp_path: Path, plugins: Path, case: str) -> None:
    text, line, key, message = BAD[case]
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load(path, allow_insecure=False)
    (shown,) = caught.value.lines()
    where = f"{path}:{line}" if line is not None else path
    assert shown.startswith(f"{where}: {key or ''}"), shown
    assert message in shown


def test_insecure_skip_tls_verify_only_when_the_exporter_allows_it(tmp_path: Path) -> None:
    path = write(tmp_path, _one_context(SERVER + "    insecure-skip-tls-verify: true\n", TOKEN))
    config = load(path, allow_insecure=True)
    assert config.insecure is not None and config.insecure.line == 9


def test_check_config_exits_2_naming_the_kubeconfig_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = write(tmp_path, "current-context: c\ncontexts: 5\n")
    config = tmp_path / "config.yaml"
    config.write_text(
        "sources:\n  opencost: {url: 'http://opencost:9003'}\n"
        f"  kueue: {{kubeconfig: {json.dumps(kubeconfig)}}}\n",
        encoding="utf-8",
    )
    assert main(["--config.file", str(config), "--check-config"], CLOCK) == 2
    err = capsys.readouterr().err
    assert f"error: {kubeconfig}:2: contexts: must be a list of named contexts" in err
    assert "Traceback" not in err


FUZZ = settings(
    max_examples=examples(100),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(
        st.sampled_from(["name", "user", "cluster", "exec"]), st.integers(), max_size=2
    ),
)


def _paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*at, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _paths(value, (*at, index))
    return out


@FUZZ
@given(data=st.data())
def test_any_value_anywhere_loads_or_is_a_located_error(
    tmp_path: Path, plugins: Path, data: st.DataObject
) -> None:
    # Each provider's kubeconfig with one value swapped for another type: never a traceback.
    doc = yaml.safe_load(data.draw(st.sampled_from([EKS, GKE])))
    path = data.draw(st.sampled_from(_paths(doc)[1:]))
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = data.draw(ODD_VALUES)
    text = yaml.safe_dump(doc)
    file = write(tmp_path, text)
    try:
        load(file, allow_insecure=False)
    except ConfigError as exc:
        for shown in exc.lines():
            where = re.match(rf"^{re.escape(file)}:([0-9]+): [^ ]", shown)
            assert where is not None, shown
            assert 1 <= int(where.group(1)) <= text.count("\n"), shown

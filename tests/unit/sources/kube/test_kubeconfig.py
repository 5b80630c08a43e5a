"""kubeconfigs as the providers write them (EKS, GKE, AKS, kind), and any value anywhere in them."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exporter.errors import ConfigError
from exporter.sources.kube.kubeconfig import Kubeconfig, load
from tests.support.properties import examples
from tests.unit.sources.kube.kubeconfigs import CA, CA_DATA, CA_PEM, EKS, GKE, KIND, write


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

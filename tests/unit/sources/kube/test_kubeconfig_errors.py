"""Every kubeconfig error names its file, line and key, down to `--check-config`'s exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from exporter.cli import main
from exporter.errors import ConfigError
from exporter.sources.kube.kubeconfig import load
from tests.conftest import CLOCK
from tests.unit.sources.kube.kubeconfigs import CA_DATA, write


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

"""A kubeconfig with an `exec` user against the fake API server over TLS: the plugin is a real
process emitting an ExecCredential, its token kept until it expires; a plugin that hangs,
fails or prints garbage takes the Kueue source down with a clear reason and the rest serves."""

from __future__ import annotations

import base64
import json
import logging
import ssl
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trustme
import yaml
from prometheus_client.parser import text_string_to_metric_families

from chargeback_demo.cluster import CLUSTER
from chargeback_demo.fake_kube import make_handler
from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer
from chargeback_demo.stack import DemoStack, demo_config_dict
from exporter import redact
from exporter.config.schema import Config, KueueConfig
from exporter.errors import UpstreamCredentialError, UpstreamUnavailable
from exporter.serve.wiring import make_refresher
from exporter.sources.kueue.source import build_client
from tests.conftest import FIXED_NOW
from tests.integration.sources.test_kueue import NIGHT, night_records
from tests.unit.sources.kueue.api_server import fetch

V1 = "client.authentication.k8s.io/v1"
FAKE_TOKEN = "demo-kube-api-token"
# What the plugin says on stderr and prints as garbage: neither may appear anywhere.
LEAK = "AKIAEXAMPLELEAKEDKEY0123"

# The plugin: `mode` says what it does this run; every run is numbered and what it was given
# (arguments, its env entry, KUBERNETES_EXEC_INFO) is written down.
PLUGIN = f"""\
#!{sys.executable}
import json, os, pathlib, subprocess, sys, time
here = pathlib.Path(os.environ["PLUGIN_STATE"])
mode = (here / "mode").read_text().strip()
runs = len(list(here.glob("run-*.json"))) + 1
(here / f"run-{{runs}}.json").write_text(json.dumps({{
    "args": sys.argv[1:], "info": json.loads(os.environ["KUBERNETES_EXEC_INFO"]),
    "pid": os.getpid(),
}}))
if mode == "hang":
    child = subprocess.Popen(["sleep", "300"])
    (here / "child.pid").write_text(str(child.pid))
    time.sleep(300)
if mode == "fail":
    sys.stderr.write("An error occurred (ExpiredToken): {LEAK}\\n")
    sys.exit(3)
if mode == "garbage":
    print("<html><body>Sign in again: {LEAK}</body></html>")
    sys.exit(0)
status = {{"token": f"exec-token-{{runs:04d}}-0123456789"}}
expiry = (here / "expiry").read_text().strip()
if expiry:
    status["expirationTimestamp"] = expiry
print(json.dumps({{"apiVersion": "{V1}", "kind": "ExecCredential", "status": status}}))
"""


@dataclass
class ExecRig:
    """The TLS fake API server, the plugin's state folder and the kubeconfig naming both."""

    url: str
    state: Path
    kubeconfig: str
    accepted: set[str]
    ca_pem: bytes
    seen: list[str]

    def mode(self, mode: str, expiry: str = "") -> None:
        (self.state / "mode").write_text(mode)
        (self.state / "expiry").write_text(expiry)

    def runs(self) -> list[dict[str, Any]]:
        count = len(list(self.state.glob("run-*.json")))
        return [json.loads((self.state / f"run-{n}.json").read_text()) for n in range(1, count + 1)]


@pytest.fixture
def exec_rig(tmp_path: Path) -> Iterator[ExecRig]:
    ca = trustme.CA()
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_tls)
    handler = make_handler(CLUSTER, lambda: NIGHT, token=FAKE_TOKEN)
    accepted: set[str] = set()
    seen: list[str] = []

    def api(request: FakeRequest) -> FakeResponse:
        # Any token the plugin has handed out is good: each is the fake's own token.
        given = request.headers.get("authorization", "")
        seen.append(given)
        if given.removeprefix("Bearer ") in accepted:
            headers = {**request.headers, "authorization": f"Bearer {FAKE_TOKEN}"}
            request = replace(request, headers=headers)
        return handler(request)

    server = FakeServer(api, tls=server_tls).start()
    state = tmp_path / "plugin-state"
    state.mkdir()
    plugin = tmp_path / "bin" / "demo-auth-plugin"
    plugin.parent.mkdir()
    plugin.write_text(PLUGIN)
    plugin.chmod(0o755)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(_kubeconfig(server.url, ca.cert_pem.bytes(), state)))
    rig = ExecRig(server.url, state, str(kubeconfig), accepted, ca.cert_pem.bytes(), seen)
    rig.mode("good")
    try:
        yield rig
    finally:
        server.stop()


def _kubeconfig(url: str, ca_pem: bytes, state: Path) -> dict[str, Any]:
    exec_user = {
        "apiVersion": V1,
        "command": "bin/demo-auth-plugin",  # relative to the kubeconfig, as kubectl resolves it
        "args": ["token", "--cluster", "demo"],
        "env": [{"name": "PLUGIN_STATE", "value": str(state)}],
        "interactiveMode": "Never",
        "provideClusterInfo": True,
    }
    cluster = {"server": url, "certificate-authority-data": base64.b64encode(ca_pem).decode()}
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "demo",
        "contexts": [{"name": "demo", "context": {"cluster": "demo", "user": "finance-reader"}}],
        "clusters": [{"name": "demo", "cluster": cluster}],
        "users": [{"name": "finance-reader", "user": {"exec": exec_user}}],
    }


def _accept_every_token(rig: ExecRig) -> None:
    rig.accepted.update(f"exec-token-{n:04d}-0123456789" for n in range(1, 10))


def test_an_exec_user_reads_kueue_over_tls_with_the_inline_ca(exec_rig: ExecRig) -> None:
    _accept_every_token(exec_rig)
    cfg = KueueConfig(kubeconfig=exec_rig.kubeconfig)
    with build_client(cfg, clock=lambda: NIGHT) as client:
        snapshot = fetch(client, cfg)
    got = {(r.cluster_queue, r.flavor, r.resource): r for r in snapshot.queues}
    assert len(got) == 9  # 3 queues x (cpu, memory, gpu)
    assert {key: got[key] for key in night_records()} == night_records()
    (run,) = exec_rig.runs()
    assert run["args"] == ["token", "--cluster", "demo"]
    assert run["info"] == {
        "apiVersion": V1,
        "kind": "ExecCredential",
        "spec": {
            "interactive": False,
            "cluster": {
                "server": exec_rig.url,
                "certificate-authority-data": base64.b64encode(exec_rig.ca_pem).decode(),
            },
        },
    }
    assert set(exec_rig.seen) == {"Bearer exec-token-0001-0123456789"}


def test_the_token_is_kept_until_it_expires_then_asked_again(exec_rig: ExecRig) -> None:
    _accept_every_token(exec_rig)
    exec_rig.mode("good", expiry="2026-03-10T23:45:00Z")  # NIGHT is 23:30
    now = [NIGHT]
    cfg = KueueConfig(kubeconfig=exec_rig.kubeconfig)
    with build_client(cfg, clock=lambda: now[0]) as client:
        fetch(client, cfg)
        now[0] += timedelta(minutes=14)
        fetch(client, cfg)
        assert len(exec_rig.runs()) == 1
        now[0] = datetime(2026, 3, 10, 23, 45, tzinfo=UTC)
        exec_rig.accepted.discard("exec-token-0001-0123456789")  # the API server expired it
        exec_rig.mode("good", expiry="2026-03-11T00:00:00Z")
        fetch(client, cfg)
    assert len(exec_rig.runs()) == 2
    assert exec_rig.seen[-1] == "Bearer exec-token-0002-0123456789"


def test_a_revoked_token_without_expiry_is_asked_again_after_the_401(exec_rig: ExecRig) -> None:
    exec_rig.accepted.add("exec-token-0001-0123456789")
    cfg = KueueConfig(kubeconfig=exec_rig.kubeconfig)
    with build_client(cfg, clock=lambda: NIGHT) as client:
        fetch(client, cfg)
        exec_rig.accepted.clear()
        exec_rig.accepted.add("exec-token-0002-0123456789")
        with pytest.raises(Exception, match="401"):
            fetch(client, cfg)
        fetch(client, cfg)  # the next refresh asks the plugin again
    assert len(exec_rig.runs()) == 2


def test_a_hanging_plugin_and_its_children_are_killed_at_the_deadline(exec_rig: ExecRig) -> None:
    exec_rig.mode("hang")
    cfg = KueueConfig(kubeconfig=exec_rig.kubeconfig, timeout=timedelta(seconds=1))
    with build_client(cfg) as client, pytest.raises(UpstreamCredentialError) as caught:
        fetch(client, cfg)
    assert str(caught.value) == (
        "kueue: exec plugin of kubeconfig user 'finance-reader' (demo-auth-plugin) "
        "did not finish within 1 s"
    )
    (run,) = exec_rig.runs()
    assert not _alive(int(run["pid"]))  # ended and reaped
    child = int((exec_rig.state / "child.pid").read_text())
    assert _ends(child), "the plugin's own child outlived it"
    assert exec_rig.seen == []  # the API server was never asked


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _ends(pid: int) -> bool:
    # Killed with its group; a zombie waiting for init to reap it counts as ended.
    for _ in range(500):  # the kernel tears it down soon after the signal; wait up to 5 s
        if not _alive(pid):
            return True
        time.sleep(0.01)
    return False


CASES = {
    "garbage": "printed something that is not an ExecCredential (not JSON)",
    "fail": "exited with status 3",
    "hang": "did not finish within 1 s",
}


@pytest.mark.parametrize("mode", sorted(CASES))
def test_a_broken_plugin_takes_only_kueue_down(
    exec_rig: ExecRig, stack: DemoStack, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    redact.install()
    exec_rig.mode(mode)
    data: dict[str, Any] = demo_config_dict(stack.urls, str(stack.secrets))
    data["sources"]["kueue"] = {"kubeconfig": exec_rig.kubeconfig, "timeout": "1s"}
    refresher = make_refresher(Config.model_validate(data), clock=lambda: FIXED_NOW)
    try:
        assert not refresher.refresh_all()
        served = _served(refresher.exposition.text.decode())
    finally:
        refresher.stop()
    up = served["chargeback_source_up"]
    assert {dict(k)["source"]: v for k, v in up.items()} == {
        "opencost": 1.0,
        "dcgm": 1.0,
        "litellm": 1.0,
        "vllm": 1.0,
        "kueue_metrics": 1.0,  # Kueue's metrics come through Prometheus: no kubeconfig
        "kueue": 0.0,
    }
    assert served["chargeback_source_errors_total"][(("reason", "auth"), ("source", "kueue"))] == 1
    assert f"exec plugin of kubeconfig user 'finance-reader' (demo-auth-plugin) {CASES[mode]}" in (
        caplog.text
    )
    text = caplog.text + refresher.exposition.text.decode()
    assert LEAK not in text and "Sign in again" not in text and "Traceback" not in text


def _served(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def test_plugin_output_past_the_bound_is_refused(exec_rig: ExecRig) -> None:
    big = exec_rig.state.parent / "bin" / "big-plugin"
    big.write_text(f"#!{sys.executable}\nimport sys\nsys.stdout.write('x' * (2 << 20))\n")
    big.chmod(0o755)
    kubeconfig = yaml.safe_load(Path(exec_rig.kubeconfig).read_text())
    kubeconfig["users"][0]["user"]["exec"]["command"] = str(big)
    Path(exec_rig.kubeconfig).write_text(yaml.safe_dump(kubeconfig))
    cfg = KueueConfig(kubeconfig=exec_rig.kubeconfig)
    with build_client(cfg) as client, pytest.raises(UpstreamCredentialError, match="1024 KiB"):
        fetch(client, cfg)


CERT_PLUGIN = f"""\
#!{sys.executable}
import json, pathlib, sys
here = pathlib.Path(sys.argv[1])
status = {{"clientCertificateData": (here / "client.crt").read_text(),
           "clientKeyData": (here / "client.key").read_text()}}
print(json.dumps({{"apiVersion": "{V1}", "kind": "ExecCredential", "status": status}}))
"""


@pytest.mark.parametrize("how", ["inline", "exec", "none"])
def test_a_client_certificate_inline_or_from_the_plugin(tmp_path: Path, how: str) -> None:
    ca, client_ca = trustme.CA(), trustme.CA()
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_tls)
    server_tls.verify_mode = ssl.CERT_REQUIRED  # the API server admits only its clients
    client_ca.configure_trust(server_tls)
    handler = make_handler(CLUSTER, lambda: NIGHT, token=FAKE_TOKEN)
    tokens: list[str | None] = []

    def api(request: FakeRequest) -> FakeResponse:
        # The certificate is the identity: what the fake wants as a token is put in here.
        tokens.append(request.headers.get("authorization"))
        headers = {**request.headers, "authorization": f"Bearer {FAKE_TOKEN}"}
        return handler(replace(request, headers=headers))

    client = client_ca.issue_cert("finance-reader")
    (tmp_path / "client.crt").write_bytes(client.cert_chain_pems[0].bytes())
    (tmp_path / "client.key").write_bytes(client.private_key_pem.bytes())
    plugin = tmp_path / "cert-plugin"
    plugin.write_text(CERT_PLUGIN)
    plugin.chmod(0o755)
    users = {
        "inline": {
            "client-certificate-data": base64.b64encode(client.cert_chain_pems[0].bytes()).decode(),
            "client-key-data": base64.b64encode(client.private_key_pem.bytes()).decode(),
        },
        "exec": {
            "exec": {
                "apiVersion": V1,
                "command": str(plugin),
                "args": [str(tmp_path)],
                "interactiveMode": "IfAvailable",
            }
        },
        "none": {"token": "a-token-the-tls-layer-never-sees"},
    }
    server = FakeServer(api, tls=server_tls).start()
    try:
        kubeconfig = _kubeconfig(server.url, ca.cert_pem.bytes(), tmp_path)
        kubeconfig["users"][0]["user"] = users[how]
        (tmp_path / "kubeconfig").write_text(yaml.safe_dump(kubeconfig))
        cfg = KueueConfig(kubeconfig=str(tmp_path / "kubeconfig"))
        with build_client(cfg) as kube:
            if how == "none":
                with pytest.raises(UpstreamUnavailable):
                    fetch(kube, cfg)
                assert tokens == []
                return
            snapshot = fetch(kube, cfg)
    finally:
        server.stop()
    assert len(snapshot.queues) == 9
    assert set(tokens) == {None}  # a certificate, and no bearer token

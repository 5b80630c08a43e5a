"""The Kueue source's clients: in-cluster with a rotating token, kubeconfig, TLS settings."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from exporter.config.schema import KueueConfig
from exporter.errors import ConfigError
from exporter.sources.kueue.source import build_client
from tests.unit.sources.kueue.api_server import fetch


def capture(seen: list[httpx.Request]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"metadata": {}, "items": []})

    return httpx.MockTransport(answer)


def test_in_cluster_client_rereads_the_rotating_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    (tmp_path / "token").write_text("first-sa-token-0001")
    seen: list[httpx.Request] = []
    cfg = KueueConfig(in_cluster=True)
    with build_client(cfg, capture(seen), service_account_dir=str(tmp_path)) as client:
        fetch(client, cfg)
        (tmp_path / "token").write_text("second-sa-token-0002")
        fetch(client, cfg)
        assert "first-sa" not in repr(client.auth) and "second-sa" not in repr(client.auth)
    assert str(seen[0].url).startswith("https://10.96.0.1:6443/apis/kueue.x-k8s.io/v1beta2/")
    tokens = [r.headers["authorization"] for r in seen]
    # Each refresh lists ClusterQueues and then ResourceFlavors.
    first, second = "Bearer first-sa-token-0001", "Bearer second-sa-token-0002"
    assert tokens == [first, first, second, second]


def test_in_cluster_outside_a_pod_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_HOST"):
        build_client(KueueConfig(in_cluster=True))


def kubeconfig(tmp_path: Path, user: dict[str, Any]) -> str:
    ca = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "prod",
        "contexts": [
            {"name": "dev", "context": {"cluster": "dev", "user": "dev"}},
            {"name": "prod", "context": {"cluster": "prod", "user": "reader"}},
        ],
        "clusters": [
            {
                "name": "prod",
                "cluster": {"server": "https://api.prod:6443/", "certificate-authority-data": ca},
            }
        ],
        "users": [{"name": "reader", "user": user}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(doc))  # JSON is YAML
    return str(path)


@pytest.mark.parametrize("user", [{"token": "kc-token-0123456789"}, {"tokenFile": "tok"}])
def test_kubeconfig_current_context_server_and_token(tmp_path: Path, user: dict[str, Any]) -> None:
    (tmp_path / "tok").write_text("kc-token-0123456789")
    cfg = KueueConfig(kubeconfig=kubeconfig(tmp_path, user))
    seen: list[httpx.Request] = []
    with build_client(cfg, capture(seen)) as client:
        fetch(client, cfg)
    assert str(seen[0].url).startswith("https://api.prod:6443/apis/")
    assert seen[0].headers["authorization"] == "Bearer kc-token-0123456789"


@pytest.mark.parametrize(
    "user", [{"auth-provider": {"name": "gcp"}}, {"username": "admin", "password": "pw"}]
)
def test_kubeconfig_unsupported_credentials(tmp_path: Path, user: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="not supported"):
        build_client(KueueConfig(kubeconfig=kubeconfig(tmp_path, user)))


def test_kubeconfig_missing_or_broken(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope: .*cannot read"):
        build_client(KueueConfig(kubeconfig=str(tmp_path / "nope")))
    (tmp_path / "bad").write_text("current-context: x\ncontexts: []\n")
    with pytest.raises(ConfigError, match="no context named 'x'"):
        build_client(KueueConfig(kubeconfig=str(tmp_path / "bad")))


def test_bad_ca_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text("not a certificate")
    cfg = KueueConfig(url="https://k8s:6443", ca_file=str(tmp_path / "ca.crt"))
    with pytest.raises(ConfigError, match=r"ca\.crt is not a PEM certificate"):
        build_client(cfg)


def test_insecure_skip_verify_builds_without_a_ca() -> None:
    with build_client(KueueConfig(url="https://k8s:6443", insecure_skip_tls_verify=True)) as c:
        assert str(c.base_url) == "https://k8s:6443"

"""An exec plugin's output is checked as an ExecCredential, kept until it expires, and never
quoted; the plugin itself runs in the integration tests (these start no process)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from exporter.clock import Clock
from exporter.errors import UpstreamCredentialError
from exporter.sources.deadline import Deadline, RetryPolicy, refresh_deadline
from exporter.sources.kube.exec_plugin import Credential, ExecAuth, _exec_info, _parse
from exporter.sources.kube.kubeconfig import ExecSpec

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"
TOKEN = "k8s-aws-v1.aHR0cHM6Ly9zdHMuZXUtd2VzdC0xLmFtYXpvbmF3cy5jb20v"
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def spec(version: str = V1BETA1, cluster: dict[str, Any] | None = None) -> ExecSpec:
    return ExecSpec("finance-reader", version, "/usr/local/bin/aws", ("eks",), (), cluster)


def output(status: Any, version: str = V1BETA1, kind: str = "ExecCredential") -> bytes:
    return json.dumps({"kind": kind, "apiVersion": version, "spec": {}, "status": status}).encode()


def test_a_token_with_its_expiry() -> None:
    # What `aws eks get-token` prints (v1beta1; the timestamp in RFC 3339 with Z).
    status = {"expirationTimestamp": "2026-03-10T12:14:00Z", "token": TOKEN}
    credential = _parse(spec(), output(status))
    assert credential.token == TOKEN
    assert credential.expires == datetime(2026, 3, 10, 12, 14, tzinfo=UTC)
    assert credential.cert is None and TOKEN not in repr(credential)


def test_a_client_certificate_pair_in_v1() -> None:
    status = {"clientCertificateData": "-----BEGIN CERTIFICATE-----\n", "clientKeyData": "k"}
    credential = _parse(spec(V1), output(status, V1))
    assert credential.token is None and credential.cert and credential.key == b"k"
    assert credential.expires is None


BAD = {
    "not JSON": (b"Error: the SSO session has expired " + TOKEN.encode(), "not JSON"),
    "not UTF-8": (b"\xff\xfe" + TOKEN.encode(), "not JSON"),
    "a list": (b"[1, 2]", "not an ExecCredential (kind)"),
    "another kind": (output({"token": TOKEN}, kind="Status"), "not an ExecCredential (kind)"),
    "another version": (output({"token": TOKEN}, V1), f"another apiVersion than {V1BETA1}"),
    "no status": (output(None), "without a status"),
    "empty status": (output({}), "neither status.token nor a client certificate"),
    "token a number": (output({"token": 12345678901234}), "not a string"),
    "token with a newline": (output({"token": TOKEN + "\nX-Evil: 1"}), "unusable token"),
    "half a pair": (output({"clientCertificateData": "c"}), "not as a pair"),
    "naive expiry": (
        output({"token": TOKEN, "expirationTimestamp": "2026-03-10T12:14:00"}),
        "not RFC 3339",
    ),
    "expiry not a date": (
        output({"token": TOKEN, "expirationTimestamp": "in an hour"}),
        "not RFC 3339",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_output_that_is_not_a_credential_says_why_and_never_quotes_it(case: str) -> None:
    out, reason = BAD[case]
    with pytest.raises(UpstreamCredentialError) as caught:
        _parse(spec(), out)
    message = str(caught.value)
    assert message.startswith("kueue: exec plugin of kubeconfig user 'finance-reader' (aws) ")
    assert reason in message
    assert TOKEN not in message and "SSO" not in message and "Evil" not in message
    assert caught.value.reason == "auth"


def test_kubernetes_exec_info_as_client_go_sets_it() -> None:
    cluster = {"server": "https://34.90.1.2", "certificate-authority-data": "Q0E="}
    assert json.loads(_exec_info(spec(V1, cluster))) == {
        "apiVersion": V1,
        "kind": "ExecCredential",
        "spec": {"interactive": False, "cluster": cluster},
    }
    assert json.loads(_exec_info(spec()))["spec"] == {"interactive": False}


class Plugin:
    """Stands in for the process: hands out numbered tokens, records the time it was given."""

    def __init__(self, lifetime: timedelta | None, clock: Clock) -> None:
        self.lifetime = lifetime
        self.clock = clock
        self.runs: list[float] = []

    def __call__(self, spec: ExecSpec, seconds: float) -> Credential:
        self.runs.append(seconds)
        expires = self.clock() + self.lifetime if self.lifetime is not None else None
        return Credential(f"token-number-{len(self.runs):04d}", None, None, expires)


def _send(auth: ExecAuth, status: int = 200) -> str:
    seen: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["authorization"])
        return httpx.Response(status)

    with httpx.Client(transport=httpx.MockTransport(server), auth=auth) as client:
        client.get("https://k/apis")
    return seen[0]


def test_the_credential_is_kept_until_it_expires() -> None:
    now = [NOW]
    plugin = Plugin(timedelta(minutes=15), lambda: now[0])
    auth = ExecAuth(spec(), 30.0, lambda: now[0], run=plugin)
    assert _send(auth) == "Bearer token-number-0001"
    now[0] += timedelta(minutes=14, seconds=59)
    assert _send(auth) == "Bearer token-number-0001"
    now[0] += timedelta(seconds=1)  # the expiry itself: no longer valid
    assert _send(auth) == "Bearer token-number-0002"
    assert len(plugin.runs) == 2


def test_without_an_expiry_a_401_asks_the_plugin_again() -> None:
    plugin = Plugin(None, lambda: NOW)
    auth = ExecAuth(spec(), 30.0, lambda: NOW, run=plugin)
    assert _send(auth) == "Bearer token-number-0001"
    assert _send(auth) == "Bearer token-number-0001"
    assert _send(auth, 401) == "Bearer token-number-0001"  # revoked: dropped
    assert _send(auth) == "Bearer token-number-0002"


def test_the_plugin_gets_the_call_timeout_within_the_refresh_deadline() -> None:
    plugin = Plugin(None, lambda: NOW)
    ExecAuth(spec(), 30.0, lambda: NOW, run=plugin).credential()
    policy = RetryPolicy(monotonic=lambda: 100.0)
    with refresh_deadline(Deadline(policy, expires=104.5)):
        ExecAuth(spec(), 30.0, lambda: NOW, run=plugin).credential()
    assert plugin.runs == [30.0, 4.5]

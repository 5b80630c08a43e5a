"""Secrets: keys and tokens with control characters are refused without ever being quoted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from exporter.cli import main
from exporter.config.schema import KueueConfig
from exporter.credentials import MAX_SECRET_BYTES, read_secret
from exporter.errors import ConfigError, UpstreamCredentialError
from exporter.redact import MIN_SECRET_LENGTH
from exporter.sources.kube_client import build_client
from tests.conftest import CLOCK

SECRET = "sk-Zq8rT4m2Wx9pLk"
BAD = {
    "inner newline": f"{SECRET}\nX-Injected: 1",
    "NUL": f"{SECRET}\x00tail",
    "carriage return": f"{SECRET}\rtail",
    "DEL": f"{SECRET}\x7ftail",
    "C1 control": f"{SECRET}\x85tail",
    "tab": f"{SECRET}\ttail",
}


def _ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200)


@pytest.mark.parametrize("value", BAD.values(), ids=BAD.keys())
def test_control_characters_are_refused_from_env_and_file(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = []
    if "\x00" not in value:  # the operating system keeps NUL out of the environment
        monkeypatch.setenv("TEST_KEY", value)
        with pytest.raises(ValueError, match="contains a control character") as from_env:
            read_secret("TEST_KEY", None)
        assert "environment variable TEST_KEY" in str(from_env.value)
        messages.append(str(from_env.value))
    (tmp_path / "key").write_text(value + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="contains a control character") as from_file:
        read_secret(None, str(tmp_path / "key"))
    messages.append(str(from_file.value))
    for message in messages:
        assert SECRET not in message and "tail" not in message


def test_surrounding_whitespace_is_not_part_of_the_secret(tmp_path: Path) -> None:
    (tmp_path / "key").write_text(f"\n  {SECRET}\r\n", encoding="utf-8")
    assert read_secret(None, str(tmp_path / "key")).get_secret_value() == SECRET


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (b"", "is empty"),
        (b" \n", "is empty"),
        (SECRET.encode() + b"\xff", "is not UTF-8 text"),
        ("sk-clé".encode(), "contains a non-ASCII character"),
        (b"x" * (MAX_SECRET_BYTES + 1), "is larger than 64 KiB"),
    ],
)
def test_odd_secret_files_are_refused_without_quoting(
    tmp_path: Path, raw: bytes, needle: str
) -> None:
    (tmp_path / "key").write_bytes(raw)
    with pytest.raises(ValueError, match=needle) as caught:
        read_secret(None, str(tmp_path / "key"))
    assert SECRET not in str(caught.value) and "0xff" not in str(caught.value)


def test_check_config_refuses_a_key_with_a_newline(
    write_config: Callable[[str], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # httpx used to put the whole header, key included, in its "Illegal header value" error.
    (tmp_path / "key").write_text(BAD["inner newline"], encoding="utf-8")
    path = write_config(
        "sources:\n  litellm:\n"
        f'    {{url: "http://litellm:4000", api_key_file: {tmp_path}/key, currency: EUR}}\n'
    )
    assert main(["--config.file", path, "--check-config"], CLOCK) == 2
    err = capsys.readouterr().err
    key = "sources.litellm.api_key_file"
    assert err.startswith(f"error: {path}:3: {key}: secret file {tmp_path}/key contains")
    assert SECRET not in err and err.count("\n") == 1


def test_a_kubernetes_token_file_is_checked_when_the_client_is_built(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(f"{SECRET}\x00\n", encoding="utf-8")
    cfg = KueueConfig(url="https://k8s:6443", token_file=str(tmp_path / "token"))
    with pytest.raises(ValueError, match="control character") as caught:
        build_client(cfg, httpx.MockTransport(_ok))
    assert SECRET not in str(caught.value)


def test_a_rotated_bad_token_fails_the_refresh_not_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    (tmp_path / "token").write_text("good-service-account-token\n", encoding="utf-8")
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"items": []})

    cfg = KueueConfig(in_cluster=True)
    with build_client(cfg, httpx.MockTransport(answer), service_account_dir=str(tmp_path)) as c:
        c.get("/apis")
        (tmp_path / "token").write_text(f"{SECRET}\nrotated\n", encoding="utf-8")
        with pytest.raises(UpstreamCredentialError, match="control character") as caught:
            c.get("/apis")
    # The API server was never asked: the exporter's credential failed, not the network.
    assert SECRET not in str(caught.value) and caught.value.reason == "auth"
    assert [r.headers["authorization"] for r in seen] == ["Bearer good-service-account-token"]


def test_a_kubeconfig_inline_token_is_checked(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "current-context: c\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
        "clusters: [{name: k, cluster: {server: 'https://k8s:6443'}}]\n"
        f'users: [{{name: u, user: {{token: "{SECRET}\\nmore"}}}}]\n',
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigError, match=":4: users\\[0\\]\\.user\\.token: the kubeconfig user's token contains"
    ) as caught:
        build_client(KueueConfig(kubeconfig=str(kubeconfig)), httpx.MockTransport(_ok))
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("short", ["gpu", "tok", "total", "x" * (MIN_SECRET_LENGTH - 1)])
def test_a_secret_too_short_to_tell_from_data_is_refused_naming_where(
    short: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Masked wherever text is quoted, `gpu` would turn every GPU figure in a log into <redacted>.
    monkeypatch.setenv("TEST_KEY", short)
    with pytest.raises(ValueError, match="environment variable TEST_KEY is too short"):
        read_secret("TEST_KEY", None)
    (tmp_path / "key").write_text(short + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"secret file {tmp_path}/key is too short") as caught:
        read_secret(None, str(tmp_path / "key"))
    assert repr(short) not in str(caught.value)
    (tmp_path / "key").write_text("x" * MIN_SECRET_LENGTH, encoding="utf-8")
    assert read_secret(None, str(tmp_path / "key")).get_secret_value() == "x" * MIN_SECRET_LENGTH

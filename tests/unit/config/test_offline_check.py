"""`--check-config.offline`: the example passes outside a cluster; nothing is read or built."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from exporter.cli import main
from tests.conftest import CLOCK

ROOT = Path(__file__).parents[3]
EXAMPLE = str(ROOT / "deploy" / "config.example.yaml")
WEB_EXAMPLE = str(ROOT / "deploy" / "web-config.example.yml")

# Every outside reference points at something that does not exist on this machine.
ELSEWHERE = """\
currency: EUR
sources:
  opencost: {url: "http://opencost.invalid:9003"}
  kueue: {kubeconfig: /nonexistent/kubeconfig}
  litellm: {url: "http://litellm.invalid:4000", api_key_file: /nonexistent/api-key, currency: EUR}
"""


@pytest.fixture(autouse=True)
def _outside_a_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def test_the_example_config_checks_offline_but_needs_the_cluster_for_the_full_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--config.file", EXAMPLE, "--check-config.offline"], CLOCK) == 0
    assert f"{EXAMPLE}: ok (offline" in capsys.readouterr().err
    # The full check reads the service account and the key: only possible in the pod.
    assert main(["--config.file", EXAMPLE, "--check-config"], CLOCK) == 2
    assert "sources.kueue.in_cluster: KUBERNETES_SERVICE_HOST is unset" in capsys.readouterr().err


def test_offline_reads_no_secret_and_builds_no_client(
    write_config: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_config(ELSEWHERE)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("an HTTP client was built")

    with monkeypatch.context() as patched:
        patched.setattr(httpx.Client, "__init__", refuse)
        assert main(["--config.file", path, "--check-config.offline"], CLOCK) == 0
    assert main(["--config.file", path, "--check-config"], CLOCK) == 2


@pytest.mark.parametrize(
    ("source", "line", "key", "message"),
    [
        (
            '  litellm: {url: "http://l:4000", api_key_env: "LITELLM-KEY", currency: EUR}\n',
            3,
            "sources.litellm.api_key_env",
            "'LITELLM-KEY' is not an environment variable name",
        ),
        (
            '  litellm: {url: "http://l:4000", api_key_file: " ", currency: EUR}\n',
            3,
            "sources.litellm.api_key_file",
            "an empty path names no file",
        ),
        (
            "  kueue:\n    in_cluster: true\n    ca_file: ''\n",
            5,
            "sources.kueue.ca_file",
            "an empty path names no file",
        ),
        (
            '  opencost: {url: "http://o:9003", intervall: 5m}\n',
            3,
            "sources.opencost.intervall",
            "",
        ),
    ],
    ids=["env-name", "blank-key-file", "empty-ca-file", "unknown-key"],
)
def test_offline_names_file_line_and_key(
    write_config: Callable[[str], str],
    capsys: pytest.CaptureFixture[str],
    source: str,
    line: int,
    key: str,
    message: str,
) -> None:
    path = write_config(f"currency: EUR\nsources:\n{source}")
    assert main(["--config.file", path, "--check-config.offline"], CLOCK) == 2
    assert f"error: {path}:{line}: {key}: {message}" in capsys.readouterr().err


def test_offline_checks_the_web_config_without_reading_its_certificates(
    write_config: Callable[[str], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(ELSEWHERE)
    # The example names certificate files that exist only in the pod.
    args = ["--config.file", path, "--web.config.file", WEB_EXAMPLE]
    assert main([*args, "--check-config.offline"], CLOCK) == 0
    assert main([*args, "--check-config"], CLOCK) == 2
    bad = tmp_path / "web.yml"
    bad.write_text("tls_server_config:\n  cert_file: a.crt\n  keyfile: a.key\n", encoding="utf-8")
    capsys.readouterr()
    assert (
        main(["--config.file", path, "--web.config.file", str(bad), "--check-config.offline"]) == 2
    )
    assert f"{bad}:3: tls_server_config.keyfile" in capsys.readouterr().err

"""No secret reaches a log line, an error or the exposition, whatever the upstreams answer."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml

from chargeback_demo.httpfake import FakeRequest, FakeResponse, FakeServer, json_response
from chargeback_demo.stack import KUBE_TOKEN, LITELLM_KEY, DemoStack, demo_config_dict
from exporter import redact
from exporter.cli import main
from tests.conftest import CLOCK


def forms(secret: str) -> list[str]:
    """The ways a secret could leak: as is, escaped, URL- and base64-encoded, line by line."""
    escaped = repr(secret)[1:-1]
    encoded = [quote(secret, safe=""), base64.b64encode(secret.encode()).decode()]
    return [secret, escaped, *encoded, *(line for line in secret.splitlines() if len(line) > 4)]


def echo_everything(secret: str, status: int) -> Callable[[FakeRequest], FakeResponse]:
    """An upstream that echoes the secret in its body and a header, in every encoding."""

    def handler(request: FakeRequest) -> FakeResponse:
        del request
        message = " ".join(f"[{form}]" for form in forms(secret))
        body = {"kind": "Status", "status": "Failure", "code": status, "message": message}
        response = json_response(status, body)
        headers = {**response.headers, "WWW-Authenticate": f'Bearer error="{quote(secret)}"'}
        return FakeResponse(status, response.body, headers)

    return handler


@pytest.fixture
def cli_run(
    stack: DemoStack,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Callable[..., str]]:
    """Run the CLI against the demo stack with some sources replaced; return all it wrote."""
    servers: list[FakeServer] = []
    caplog.set_level(logging.DEBUG)

    def run(
        flag: str, key: str = LITELLM_KEY, **handlers: Callable[[FakeRequest], FakeResponse]
    ) -> str:
        (tmp_path / "litellm-key").write_text(key, encoding="utf-8")
        (tmp_path / "kube-token").write_text(KUBE_TOKEN, encoding="utf-8")
        urls = dict(stack.urls)
        for name, handler in handlers.items():
            servers.append(FakeServer(handler).start())
            urls[name] = servers[-1].url
        data: dict[str, Any] = demo_config_dict(urls, str(tmp_path))
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        main(["--config.file", str(path), flag], CLOCK)
        out, err = capsys.readouterr()
        return "\n".join([caplog.text, out, err])

    yield run
    for server in servers:
        server.stop()
    for name in ("kueue bearer token", *(f"{stack.urls['litellm']} authorization",)):
        redact.forget(name)


def assert_no_secret(text: str, *secrets: str) -> None:
    for secret in secrets:
        for form in forms(secret):
            assert form not in text, f"{form!r} leaked"


@pytest.mark.parametrize("flag", ["--once", "--check-config"])
def test_a_key_with_an_inner_newline_never_shows(cli_run: Callable[..., str], flag: str) -> None:
    pasted = "sk-live-Q4r7\nTz9XwPb2-second-line"
    # httpx refuses the header ("Illegal header value b'Bearer ...'"), quoting it whole.
    assert_no_secret(cli_run(flag, key=pasted), pasted)


def test_a_kubernetes_5xx_echoing_the_token_never_shows(cli_run: Callable[..., str]) -> None:
    text = cli_run("--once", kueue=echo_everything(KUBE_TOKEN, 500))
    assert_no_secret(text, KUBE_TOKEN)
    assert 'chargeback_source_errors_total{reason="http_5xx",source="kueue"} 1.0' in text
    assert "<redacted>" in text  # the echo was there, and masked
    # httpcore's own DEBUG line with the response headers: only the logging filter masks it.
    assert "WWW-Authenticate', b'Bearer error=\"<redacted>\"'" in text


def test_a_401_echoing_the_key_never_shows(cli_run: Callable[..., str]) -> None:
    text = cli_run("--once", litellm=echo_everything(LITELLM_KEY, 401))
    assert_no_secret(text, LITELLM_KEY)
    assert 'chargeback_source_errors_total{reason="auth",source="litellm"} 1.0' in text


@pytest.mark.parametrize(
    "body",
    [
        f"<html><body>upstream said: key={LITELLM_KEY}</body></html>",
        json.dumps({"teams": f"Bearer {LITELLM_KEY}"}),
        json.dumps([{"team_id": LITELLM_KEY, "spend": "lots"}]),
    ],
)
def test_a_malformed_body_containing_the_key_never_shows(
    cli_run: Callable[..., str], body: str
) -> None:
    def handler(request: FakeRequest) -> FakeResponse:
        del request
        return FakeResponse(200, body.encode(), {"Content-Type": "application/json"})

    text = cli_run("--once", litellm=handler)
    assert_no_secret(text, LITELLM_KEY)
    assert 'chargeback_source_up{source="litellm"} 0.0' in text


def test_the_healthy_stack_logs_no_secret_at_debug(cli_run: Callable[..., str]) -> None:
    text = cli_run("--once")
    assert_no_secret(text, LITELLM_KEY, KUBE_TOKEN)
    assert 'chargeback_source_up{source="litellm"} 1.0' in text

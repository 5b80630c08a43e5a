"""The Kubernetes client's token: re-read on each request, and a broken one is an auth failure."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from exporter.config.schema import KueueConfig
from exporter.errors import UpstreamCredentialError
from exporter.sources.kube_client import build_client


def test_a_token_file_that_became_a_directory_fails_the_refresh_as_auth(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("a-service-account-t0ken\n", encoding="utf-8")
    seen: list[str] = []

    def server(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["Authorization"])
        return httpx.Response(200, json={})

    cfg = KueueConfig(url="https://k", token_file=str(token))
    with build_client(cfg, transport=httpx.MockTransport(server)) as client:
        client.get("/x")
        token.unlink()
        token.mkdir()  # a projected volume gone wrong: never reached the API server
        with pytest.raises(UpstreamCredentialError) as failed:
            client.get("/x")
    assert seen == ["Bearer a-service-account-t0ken"]
    assert failed.value.reason == "auth"
    assert "a directory, not a regular file" in str(failed.value)

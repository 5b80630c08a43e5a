"""The one boundary where httpx errors become the exporter's upstream errors."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import httpx

from exporter import __version__
from exporter.errors import (
    UpstreamPayloadError,
    UpstreamStatusError,
    UpstreamUnavailable,
)

__all__ = ["error_message", "get_json", "get_text", "make_client", "upstream_errors"]

USER_AGENT = f"gpu-chargeback-exporter/{__version__}"
_MAX_ERROR_TEXT = 200


def make_client(
    base_url: str,
    timeout: timedelta,
    *,
    headers: Mapping[str, str] | None = None,
    verify: bool | str = True,
    transport: httpx.BaseTransport | None = None,
) -> httpx.Client:
    """One client per upstream, with an explicit timeout and our User-Agent."""
    seconds = timeout.total_seconds()
    return httpx.Client(
        base_url=base_url,
        timeout=httpx.Timeout(seconds, connect=min(seconds, 5.0)),
        headers={"User-Agent": USER_AGENT, **(headers or {})},
        verify=verify,
        transport=transport,
        follow_redirects=True,
    )


@contextmanager
def upstream_errors(source: str) -> Iterator[None]:
    """Translate httpx transport errors into UpstreamUnavailable, naming the source."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise UpstreamUnavailable(
            f"{source}: timed out ({type(exc).__name__})", timeout=True
        ) from None
    except httpx.TransportError as exc:
        raise UpstreamUnavailable(f"{source}: unreachable ({type(exc).__name__}: {exc})") from None


def error_message(response: httpx.Response) -> str:
    """The human part of an error body: JSON `message`/`error.message`/`detail`, or plain text."""
    text = response.text.strip()
    try:
        body = json.loads(text.splitlines()[0]) if text else None
    except (json.JSONDecodeError, IndexError):
        body = None
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        detail = body.get("detail")
        if isinstance(error, dict):
            message = error.get("message")
        elif error is not None:
            message = error
        if message is None and detail is not None:
            message = detail.get("error", detail) if isinstance(detail, dict) else detail
        if message is None:
            message = body.get("message")
    if message is None:
        message = text.splitlines()[0] if text else response.reason_phrase
    return str(message)[:_MAX_ERROR_TEXT]


def _checked(source: str, response: httpx.Response) -> httpx.Response:
    if response.status_code != 200:
        raise UpstreamStatusError(
            f"{source}: HTTP {response.status_code} from {response.request.url.path}: "
            f"{error_message(response)}",
            response.status_code,
        )
    return response


def get_text(
    client: httpx.Client, source: str, path: str, params: Mapping[str, str] | None = None
) -> str:
    """GET a path and return the body; any status but 200 is an error."""
    with upstream_errors(source):
        response = client.get(path, params=params)
    return _checked(source, response).text


def get_json(
    client: httpx.Client, source: str, path: str, params: Mapping[str, str] | None = None
) -> Any:
    """GET a path and decode its JSON body; any status but 200, or a non-JSON body, is an error."""
    with upstream_errors(source):
        response = client.get(path, params=params)
    _checked(source, response)
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UpstreamPayloadError(
            f"{source}: {response.request.url.path} did not return JSON"
        ) from None
